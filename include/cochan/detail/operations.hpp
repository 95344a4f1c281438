// cochan: the awaitable send and receive operations shared by every channel kind.
#pragma once

#include <cochan/concepts.hpp>
#include <cochan/detail/after_move.hpp>
#include <cochan/detail/config.hpp>
#include <cochan/detail/lock.hpp>
#include <cochan/detail/op_state.hpp>
#include <cochan/detail/trampoline.hpp>
#include <cochan/result.hpp>
#include <cochan/scheduler.hpp>
#include <cochan/stop_token.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

namespace cochan::detail {

/// Default resumption (docs/contract.md, rule 13), decided when the operation is woken, after
/// the lock is released:
/// - the awaiting coroutine's promise names a scheduler (`scheduling_promise`, read by
///   `adopt()` when the coroutine suspends): the coroutine is handed to it;
/// - else the waking thread is inside a scope with a scheduler (a `cochan::thread_pool` worker
///   running a task, `resumption_scope(scheduler)`): handed to that one;
/// - else on the waking thread, through its trampoline (constant stack over chains of
///   hand-offs). A resumption the trampoline queues (it runs later, when this thread's
///   outermost resumption returns) takes the operation's queue reference first; one it runs at
///   once does not need it.
/// A scheduler whose `schedule` throws leaves the coroutine to the trampoline (nothing lost).
struct resume_default {
    scheduler_ref scheduler_; // the promise's, set by adopt(); read by the waking thread, which
                              // the operation's completion (under the queue's lock) orders after

    template <class Promise> void adopt(std::coroutine_handle<Promise> h) noexcept {
        if constexpr (scheduling_promise<Promise>) {
            scheduler_ = h.promise().cochan_scheduler();
        } else {
            (void)h;
        }
    }

    template <class State> void operator()(waiter_base* w, State& state) noexcept {
        scheduler_ref s = scheduler_ ? scheduler_ : trampoline::scope_scheduler();
        if (!s) {
            trampoline::resume(w, [&state]() noexcept { state.keep_queue(); });
            return;
        }
        state.keep_queue(); // resumed later, by the scheduler
        try {
            s.schedule(std::coroutine_handle<>(w->handle_));
        } catch (...) {
            trampoline::resume(w);
        }
    }
};

/// The stop token of an operation made without one (`recv()`, `send(v)`, `recv_many(out, max)`,
/// `select(rx...)`): empty, never stopped. An awaitable holding it carries no
/// `default_stop_token`, whose construction, move, test and destructions would cost
/// instructions on every operation even when it is empty (docs/decisions.md, D-035).
struct no_stop_token {
    static constexpr bool stop_requested() noexcept { return false; }
};

/// The token type of an awaitable's operation state: an awaitable without a token has the
/// default token's state, which it starts without one.
template <class Token>
using state_token_t =
    std::conditional_t<std::is_same_v<Token, no_stop_token>, default_stop_token, Token>;

/// Starts a waiting operation state with the awaitable's token: an operation without one
/// registers no stop callback.
template <class State>
bool start_with(State& st, waiter_base::notify_fn notify, std::coroutine_handle<> h,
                no_stop_token) {
    return st.start(notify, h);
}
template <class State, stoppable_token Token>
bool start_with(State& st, waiter_base::notify_fn notify, std::coroutine_handle<> h,
                const Token& token) {
    return st.start(notify, h, token);
}

/// `resume_on(post)`: the completer calls `post(handle)` once, after the lock is released.
/// If `post` throws (an executor that cannot allocate its queue node), the coroutine is not
/// lost: it resumes inline through the trampoline instead, on the completing thread. A poster
/// must therefore not resume the coroutine and then throw.
template <class Post> struct resume_via {
    Post post_;
    /// `resume_on` chose the way back: the promise's scheduler does not change it.
    template <class Promise> static void adopt(std::coroutine_handle<Promise>) noexcept {}
    template <class State> void operator()(waiter_base* w, State& state) noexcept {
        state.keep_queue();           // resumed later, by the executor
        Post post = std::move(post_); // the awaitable may be gone as soon as `post` resumes it
        try {
            post(std::coroutine_handle<>(w->handle_));
        } catch (...) {
            trampoline::resume(w);
        }
    }
};

/// The poster `resume_on(target)` uses: the target itself, or what `poster_traits` makes of it.
template <resume_target P> auto make_poster(P&& target) {
    // NOLINTNEXTLINE(bugprone-branch-clone): if constexpr; the branches differ in what they call
    if constexpr (coroutine_poster<P>) {
        return std::decay_t<P>(std::forward<P>(target));
    } else {
        return poster_traits<std::decay_t<P>>::make(std::forward<P>(target));
    }
}

template <class P> using resume_via_t = resume_via<decltype(make_poster(std::declval<P>()))>;

/// The deadline of a blocking `_for` call: `steady_clock::now() + timeout`, saturated at the
/// clock's last time point (a timeout within a second of it, `seconds::max()` for instance,
/// means "no deadline"), so no huge timeout overflows into the past. A timeout of zero or less
/// gives `now()` (a deadline already passed: the call still takes what is there at once).
template <class Rep, class Period>
std::chrono::steady_clock::time_point
deadline_after(const std::chrono::duration<Rep, Period>& timeout) {
    using clock = std::chrono::steady_clock;
    const clock::time_point now = clock::now();
    if (timeout <= timeout.zero()) return now;
    // Compared in floating-point seconds, which holds any duration's range; the one-second
    // margin covers its rounding, so the conversion below never overflows.
    using seconds = std::chrono::duration<double>;
    if (seconds(timeout) >= seconds(clock::time_point::max() - now) - seconds(1)) {
        return clock::time_point::max();
    }
    return now + std::chrono::ceil<clock::duration>(timeout);
}

/// Wakes a thread blocked in `blocking_recv` / `blocking_send`. The waiter first spins
/// briefly (a few pauses, then a few yields, about a microsecond to a few tens of them), since
/// the other side often completes it within that time and a futex sleep and wake-up cost far
/// more; then it sleeps on the condition variable.
///
/// `done_` is set while holding the mutex, and the condition variable notified there too, so the
/// blocked thread cannot return (and destroy this object, which lives on its stack) before the
/// notifier is done with it: a waiter that saw `done_` while spinning takes the mutex once
/// before it returns, which waits for the notifier to leave signal(). Thread-safe.
class blocking_signal {
  public:
    void signal() noexcept {
        std::lock_guard lock(mutex_);
        done_.store(true, std::memory_order_release); // synchronises with the acquire in done()
        if (sleeping_) cv_.notify_one();
    }
    void wait() noexcept {
        if (spin()) return;
        std::unique_lock lock(mutex_);
        sleeping_ = true;
        cv_.wait(lock, [this] { return done_.load(std::memory_order_relaxed); });
    }
    /// false: the deadline passed first.
    ///
    /// The wait is a series of `wait_for` steps, each at most `longest_step(Clock)` and never
    /// past the deadline, with a look at `Clock` after each, rather than one `wait_until`: a
    /// standard library converts a deadline of another clock than its condition variable's by
    /// adding the difference of the two clocks' `now()`, and libstdc++ does so for
    /// `steady_clock` too where the C library has no `pthread_cond_clockwait` (MinGW-w64, glibc
    /// before 2.30). The clocks' earliest and latest time points then overflow: `max()` (what
    /// a huge timeout saturates to) into the past, so the call timed out at once, and `min()`
    /// into the far future, so it never did. A step's length is small enough not to overflow
    /// there, and the look at `Clock` decides.
    template <class Clock, class Duration>
    bool wait_until(const std::chrono::time_point<Clock, Duration>& deadline) {
        if (spin()) return true;
        std::unique_lock lock(mutex_);
        sleeping_ = true;
        while (!done_.load(std::memory_order_relaxed)) {
            const auto now = Clock::now();
            if (now >= deadline) return false;
            // Compared in floating-point seconds, which hold any clock's range.
            using seconds = std::chrono::duration<double>;
            const auto step = longest_step<Clock>();
            if (seconds(deadline.time_since_epoch()) - seconds(now.time_since_epoch()) >
                seconds(step)) {
                cv_.wait_for(lock, step);
            } else {
                cv_.wait_for(lock, std::chrono::ceil<std::chrono::nanoseconds>(deadline - now));
            }
        }
        return true;
    }

  private:
    /// The longest step of wait_until: an hour on the steady clock, which nobody adjusts; a
    /// second on any other, so a deadline of a clock that is set (system_clock) is seen within
    /// a second of the moment the clock reaches it.
    template <class Clock> static constexpr std::chrono::nanoseconds longest_step() noexcept {
        if constexpr (Clock::is_steady) {
            return std::chrono::hours(1);
        } else {
            return std::chrono::seconds(1);
        }
    }

    /// true: signalled while spinning (and the notifier has left signal()).
    bool spin() noexcept {
        for (int i = 0; i < spin_pauses + spin_yields; ++i) {
            if (done_.load(std::memory_order_acquire)) {
                std::lock_guard lock(mutex_); // wait for the notifier to leave signal()
                return true;
            }
            spin_backoff(i, spin_pauses);
        }
        return false;
    }

    static constexpr int spin_pauses = 64;
    static constexpr int spin_yields = 16;

    std::mutex mutex_;
    std::condition_variable cv_;
    std::atomic<bool> done_{false}; // written under mutex_; read by the spinning waiter without
    bool sleeping_ = false;         // guarded by mutex_: the waiter is (about to be) in cv_.wait
};

/// A blocking call: an operation state (recv_op_state or send_op_state) whose "coroutine" is
/// the calling thread, blocked on a signal. It needs no queue reference of its own: a
/// blocking call is a member call on an endpoint, alive until it returns.
template <class State> class blocking_op : public State {
  public:
    template <class... Args>
    explicit blocking_op(Args&&... args) : State(std::forward<Args>(args)...) {}

    /// Runs the operation to its end and returns its result.
    template <class Token> auto run(const Token& token) {
        if (this->start(&notify, {}, token)) {
            COCHAN_DETAIL_BLOCKING_LINKED();
            signal_.wait();
        }
        return this->result();
    }

    /// As run(), but at `deadline` the operation is cancelled: it then returns `timed_out`
    /// (a send with its value back), unless a grant won the race under the lock (then it
    /// completes normally, as with a stop request).
    template <class Clock, class Duration>
    auto run_until(const std::chrono::time_point<Clock, Duration>& deadline) {
        bool expired = false;
        if (this->start(&notify, {})) {
            COCHAN_DETAIL_BLOCKING_LINKED();
            if (!signal_.wait_until(deadline)) {
                this->cancel(); // decided under the lock; it (or the grant that won) signals
                signal_.wait();
                expired = true;
            }
        }
        auto r = this->result();
        if (expired && !r && reason(r.error()) == cancelled_of(r.error())) {
            return with_reason(std::move(r), timed_out_of(r.error()));
        }
        return r;
    }

  private:
    static void notify(waiter_base* w) noexcept {
        static_cast<blocking_op&>(State::of(w)).signal_.signal();
    }

    static recv_errc reason(recv_errc e) noexcept { return e; }
    template <class T> static send_errc reason(const send_error<T>& e) noexcept { return e.reason; }
    static recv_errc cancelled_of(recv_errc) noexcept { return recv_errc::cancelled; }
    template <class T> static send_errc cancelled_of(const send_error<T>&) noexcept {
        return send_errc::cancelled;
    }
    static recv_errc timed_out_of(recv_errc) noexcept { return recv_errc::timed_out; }
    template <class T> static send_errc timed_out_of(const send_error<T>&) noexcept {
        return send_errc::timed_out;
    }
    template <class R, class E> static R with_reason(R&& r, E reason) {
        if constexpr (std::is_same_v<E, recv_errc>) {
            return R(std::in_place_index<1>, reason);
        } else {
            auto& e = r.error();
            return R(std::in_place_index<1>,
                     std::remove_cvref_t<decltype(e)>{reason, std::move(e.value)});
        }
    }

    blocking_signal signal_; // destroyed before the state, which never touches it
};

/// `co_await rx.recv()`: a receive awaited by a coroutine. Awaited in place: neither copyable
/// nor movable. Thread safety: one awaitable is awaited by one coroutine.
///
/// Two ways through it:
/// - at once (await_ready, a receive whose token is not stopped, on a queue that
///   `starts_in_await_ready`, when a value seems buffered): take_at_once() moves the value into
///   `value_`, or finds the channel ended, in one lock section; await_resume hands it over. No
///   operation state is built: this is the path of a consumer that drains a buffer.
/// - waiting (everything else): a receive operation state (detail/op_state.hpp), constructed in
///   await_suspend inside `waiting_`, runs the protocol: link, grant, cancellation, give-back.
template <class Queue, class Resume = resume_default, class Token = default_stop_token>
class [[nodiscard]] recv_awaitable {
    using T = typename Queue::value_type;
    using state = recv_op_state<Queue, state_token_t<Token>>;

    /// The waiting receive: the operation state and the way back to its awaitable's `resume_`.
    struct waiting_state : state {
        waiting_state(Queue* q, Resume* resume) noexcept : state(q), resume_(resume) {}
        Resume* resume_;
    };

    /// Which way the receive went (owner only).
    enum class step : unsigned char {
        fresh,   ///< not started, or finished at once with nothing held
        taken,   ///< at once, with the value in `value_`, not yet handed over
        ended,   ///< at once: the channel ended (disconnected)
        waiting, ///< `waiting_` is constructed
    };

  public:
    recv_awaitable(Queue* q, Token token, Resume resume = {})
        : queue_(q), token_(std::move(token)), resume_(std::move(resume)) {}
    recv_awaitable(const recv_awaitable&) = delete;
    recv_awaitable& operator=(const recv_awaitable&) = delete;
    // Destroyed while suspended (its coroutine was destroyed), never awaited, or after
    // await_resume threw: the state unlinks, withdraws from the trampoline and gives back a
    // value the caller will never see; a value taken at once whose move out threw goes back too.
    // Inline: after an at-once receive it only tests `step_`, once per value.
    COCHAN_DETAIL_INLINE ~recv_awaitable() {
        if (step_ == step::waiting) {
            waiting_.~waiting_state();
        } else if constexpr (Queue::starts_in_await_ready) {
            if (step_ == step::taken) queue_->give_back(value_, false);
        }
    }

    /// The same receive, but the woken coroutine is resumed by `post(handle)` instead of
    /// inline on the completing thread. Call before awaiting.
    /// `post` is an invocable taking `std::coroutine_handle<>` (a thread pool's enqueue, an
    /// event loop's post), or an executor that `poster_traits` adapts (`cochan/asio.hpp`: any
    /// Asio executor).
    template <resume_target Post>
    recv_awaitable<Queue, resume_via_t<Post>, Token> resume_on(Post&& post) && {
        // This one is never started: its destruction has nothing to undo.
        return {queue_, std::move(token_),
                resume_via_t<Post>{make_poster(std::forward<Post>(post))}};
    }

    /// A receive that finds a value (or the end) completes here, before the coroutine
    /// suspends, in one lock section, with or without a stop token: no stop callback is
    /// registered for an operation that does not wait. A token already stopped leaves it to
    /// await_suspend, whose stop callback cancels it without taking anything (docs/design.md);
    /// a stop requested after this check races with the take, and the take may win, as it may
    /// against a stop requested while a waiting receive is granted. A receive that will wait
    /// starts in await_suspend too (see value_hint).
    COCHAN_DETAIL_INLINE bool await_ready() {
        if constexpr (Queue::starts_in_await_ready) {
            if (token_.stop_requested() || !queue_->value_hint()) return false;
            // Another thread may take the value here: the hint is stale, and take_at_once()
            // finds nothing (await_suspend follows).
            COCHAN_DETAIL_INTERLEAVE(ready_after_hint);
            switch (queue_->take_at_once(value_)) {
            case Queue::take_status::taken: step_ = step::taken; return true;
            case Queue::take_status::ended: step_ = step::ended; return true;
            case Queue::take_status::empty: break;
            }
        }
        return false;
    }

    /// The waiter node of the waiting operation, constructed by await_suspend (the address is
    /// valid before that): for the schedule explorer (tests/explore), which watches it.
    waiter_base* waiter_node() noexcept { return std::addressof(waiting_); }

    /// true: linked; another thread may resume (and destroy) this coroutine at once.
    template <class Promise>
    COCHAN_DETAIL_INLINE bool await_suspend(std::coroutine_handle<Promise> h) {
        resume_.adopt(h);
        ::new (static_cast<void*>(std::addressof(waiting_))) waiting_state(queue_, &resume_);
        step_ = step::waiting;
        return start_with(waiting_, &notify, h, token_);
    }

    /// The value or the error. Exception safety: if `T`'s move throws, the value stays here
    /// (its destruction gives it back) and the exception propagates.
    recv_result<T> await_resume() {
        switch (step_) {
        case step::taken: {
            auto done = on_moved<T>([this]() noexcept {
                value_.reset();
                step_ = step::fresh;
            });
            return recv_result<T>(std::in_place, std::move(*value_));
        }
        case step::ended: return recv_result<T>(std::in_place_index<1>, recv_errc::disconnected);
        default: return waiting_.result();
        }
    }

  private:
    static void notify(waiter_base* w) noexcept {
        auto& st = static_cast<waiting_state&>(state::of(w));
        (*st.resume_)(w, static_cast<state&>(st));
    }

    Queue* queue_; // kept alive by the caller's endpoint, and by the state's own reference
    [[no_unique_address]] Token token_; // a stoppable_token, or no_stop_token
    [[no_unique_address]] Resume resume_;
    step step_ = step::fresh;
    std::optional<T> value_; // a value taken at once, until await_resume moved it out
    union {
        waiting_state waiting_; // constructed by await_suspend (step::waiting)
    };
};

/// A container `recv_many` can append a `T` to.
template <class Out, class T>
concept pushes = requires(Out& out, T&& v) {
    out.push_back(std::move(v));
};

/// `co_await rx.recv_many(out, max)`: takes what is buffered (up to `max`, one lock section)
/// without waiting; when nothing is, waits like `recv()` for one value (a receive operation
/// state), then takes more that arrived meanwhile, again without waiting. Awaited in place.
/// Thread safety: one awaitable is awaited by one coroutine; `out` is the caller's and must
/// not be used by anyone else until the co_await returns. `Token` as for recv_awaitable.
template <class Queue, class Out, class Resume = resume_default, class Token = default_stop_token>
class [[nodiscard]] recv_many_awaitable : private recv_op_state<Queue, state_token_t<Token>> {
    using state = recv_op_state<Queue, state_token_t<Token>>;

  public:
    recv_many_awaitable(Queue* q, Out& out, std::size_t max, Token token, Resume resume = {})
        : state(q), out_(&out), max_(max), token_(std::move(token)), resume_(std::move(resume)) {
        COCHAN_CHECK(max >= 1, "recv_many(out, max) needs max >= 1");
    }
    recv_many_awaitable(const recv_many_awaitable&) = delete;
    recv_many_awaitable& operator=(const recv_many_awaitable&) = delete;
    ~recv_many_awaitable() = default;

    /// As `recv_awaitable::resume_on`. Call before awaiting.
    template <resume_target Post>
    recv_many_awaitable<Queue, Out, resume_via_t<Post>, Token> resume_on(Post&& post) && {
        return {this->queue(), *out_, max_, std::move(token_),
                resume_via_t<Post>{make_poster(std::forward<Post>(post))}};
    }

    /// Takes what is buffered at once (a token already stopped cancels without taking).
    bool await_ready() {
        if (token_.stop_requested()) {
            now_.emplace(std::in_place_index<1>, recv_errc::cancelled);
        } else {
            auto r = this->queue()->try_recv_many(*out_, max_);
            if (r || r.error() == recv_errc::disconnected) now_.emplace(r);
        }
        return now_.has_value();
    }

    /// Nothing was buffered: wait for one value. true: linked.
    template <class Promise> bool await_suspend(std::coroutine_handle<Promise> h) {
        resume_.adopt(h);
        return start_with(static_cast<state&>(*this), &notify, h, token_);
    }

    recv_result<std::size_t> await_resume() {
        if (now_) return *now_;
        if (auto error = this->result_into(*out_)) {
            return recv_result<std::size_t>(std::in_place_index<1>, *error);
        }
        // One value waited for; take what else is buffered, without waiting again.
        std::size_t n = 1;
        if (max_ > 1) {
            auto more = this->queue()->try_recv_many(*out_, max_ - 1);
            if (more) n += *more;
        }
        return recv_result<std::size_t>(std::in_place, n);
    }

  private:
    static void notify(waiter_base* w) noexcept {
        auto& self = static_cast<recv_many_awaitable&>(state::of(w));
        self.resume_(w, static_cast<state&>(self));
    }

    Out* out_;
    std::size_t max_;
    [[no_unique_address]] Token token_;           // a stoppable_token, or no_stop_token
    std::optional<recv_result<std::size_t>> now_; // completed without waiting
    [[no_unique_address]] Resume resume_;
};

/// `co_await tx.send(v)` on a bounded channel: a send awaited by a coroutine. Holds the value,
/// so it is awaited in place: neither copyable nor movable. Thread safety: one awaitable is
/// awaited by one coroutine.
///
/// As recv_awaitable, two ways through it: at once (await_ready, a send without a stop token
/// when a cell seems free, or on a closed sender: try_send in one lock section, no operation
/// state), or waiting (a send operation state constructed in await_suspend inside `waiting_`,
/// borrowing `value_`).
template <class Queue, class Resume = resume_default, class Token = default_stop_token>
class [[nodiscard]] send_awaitable {
    using T = typename Queue::value_type;
    using state = send_op_state<Queue, true, state_token_t<Token>>;

    struct waiting_state : state {
        waiting_state(Queue* q, bool closed, T& value, Resume* resume) noexcept
            : state(borrowed_value_t{}, q, closed, value), resume_(resume) {}
        Resume* resume_;
    };

    enum class step : unsigned char {
        fresh,   ///< not started
        sent,    ///< at once: the channel took the value
        refused, ///< at once: disconnected (the value is still in `value_`)
        waiting, ///< `waiting_` is constructed
    };

  public:
    send_awaitable(Queue* q, bool closed, T&& value, Token token, Resume resume = {})
        : queue_(q), token_(std::move(token)), resume_(std::move(resume)), value_(std::move(value)),
          closed_(closed) {}
    send_awaitable(const send_awaitable&) = delete;
    send_awaitable& operator=(const send_awaitable&) = delete;
    // Destroyed while suspended (its coroutine was destroyed) or never awaited: the state
    // unlinks and withdraws from the trampoline; the unsent value is destroyed with `value_`.
    // Inline, as ~recv_awaitable.
    COCHAN_DETAIL_INLINE ~send_awaitable() {
        if (step_ == step::waiting) waiting_.~waiting_state();
    }

    /// The same send, but the woken coroutine is resumed by `post(handle)` instead of inline on
    /// the completing thread. Call before awaiting.
    /// `post`: as for `recv_awaitable::resume_on`.
    template <resume_target Post>
    send_awaitable<Queue, resume_via_t<Post>, Token> resume_on(Post&& post) && {
        return {queue_, closed_, std::move(value_), std::move(token_),
                resume_via_t<Post>{make_poster(std::forward<Post>(post))}};
    }

    /// As recv_awaitable::await_ready: a send that finds a free cell (or a receiver waiting, or
    /// a closed channel) completes here, with or without a stop token; a token already stopped
    /// leaves it to await_suspend, which cancels it with the value back (or reports a closed
    /// sender). A full channel, or senders waiting ahead of this one, leave it to
    /// await_suspend, which links behind them.
    COCHAN_DETAIL_INLINE bool await_ready() {
        if (token_.stop_requested()) return false;
        if (closed_) {
            step_ = step::refused;
            return true;
        }
        if (!queue_->cell_hint()) return false;
        // Another thread may fill the cell here: try_send() then finds the channel full.
        COCHAN_DETAIL_INTERLEAVE(ready_after_hint);
        switch (queue_->try_send(value_)) {
        case Queue::send_status::ok: step_ = step::sent; return true;
        case Queue::send_status::disconnected: step_ = step::refused; return true;
        case Queue::send_status::full: break;
        }
        return false;
    }

    /// The waiter node of the waiting operation, constructed by await_suspend (the address is
    /// valid before that): for the schedule explorer (tests/explore), which watches it.
    waiter_base* waiter_node() noexcept { return std::addressof(waiting_); }

    /// true: linked; nothing may touch *this afterwards (see recv_awaitable::await_suspend).
    template <class Promise>
    COCHAN_DETAIL_INLINE bool await_suspend(std::coroutine_handle<Promise> h) {
        resume_.adopt(h);
        ::new (static_cast<void*>(std::addressof(waiting_)))
            waiting_state(queue_, closed_, value_, &resume_);
        step_ = step::waiting;
        return start_with(waiting_, &notify, h, token_);
    }

    /// Success, or the error with the value back; a move of `T` that threw when the queue
    /// admitted the waiting send is rethrown.
    send_result<T> await_resume() {
        switch (step_) {
        case step::sent: return send_result<T>(std::in_place);
        case step::refused:
            return send_result<T>(std::in_place_index<1>,
                                  send_error<T>{send_errc::disconnected, std::move(value_)});
        default: return waiting_.result();
        }
    }

  private:
    static void notify(waiter_base* w) noexcept {
        auto& st = static_cast<waiting_state&>(state::of(w));
        (*st.resume_)(w, static_cast<state&>(st));
    }

    Queue* queue_; // kept alive by the caller's endpoint, and by the state's own reference
    [[no_unique_address]] Token token_; // a stoppable_token, or no_stop_token
    [[no_unique_address]] Resume resume_;
    step step_ = step::fresh;
    T value_;     // the value to send; moved from once the channel took it
    bool closed_; // the sender endpoint was closed when the send was made
    union {
        waiting_state waiting_; // constructed by await_suspend (step::waiting)
    };
};

} // namespace cochan::detail
