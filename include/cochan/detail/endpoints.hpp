// cochan: the sender and receiver endpoint templates behind the four public channel kinds.
#pragma once

#include <cochan/detail/competing_queue.hpp>
#include <cochan/detail/config.hpp>
#include <cochan/detail/op_state.hpp>
#include <cochan/detail/operations.hpp>
#include <cochan/result.hpp>
#include <cochan/stop_token.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <utility>

namespace cochan::detail {

/// Tag for the factories: the endpoint adopts one reference to a new queue.
struct adopt_t {
    explicit adopt_t() = default;
};

/// A counted reference to the queue held by a sender, with its connection state.
/// Copying is defined only for MPMC (see `sender_ref`).
template <class Queue> class sender_ref_base {
  protected:
    sender_ref_base(Queue* q) noexcept : queue_(q) {}
    sender_ref_base(sender_ref_base&& other) noexcept
        : queue_(std::exchange(other.queue_, nullptr)),
          closed_(std::exchange(other.closed_, false)) {}
    sender_ref_base& operator=(sender_ref_base&& other) noexcept {
        if (this != &other) {
            reset();
            queue_ = std::exchange(other.queue_, nullptr);
            closed_ = std::exchange(other.closed_, false);
        }
        return *this;
    }
    ~sender_ref_base() { reset(); }

    /// Clone: a clone of a closed sender is closed too.
    void copy_from(const sender_ref_base& other) noexcept {
        COCHAN_CHECK(other.queue_ != nullptr, "copy of a moved-from cochan sender");
        queue_ = other.queue_;
        closed_ = other.closed_;
        queue_->retain();
        if (!closed_) queue_->add_sender();
    }

    /// Disconnects this endpoint now (if not already closed) and keeps the reference.
    void close_now() noexcept {
        if (!closed_) {
            closed_ = true;
            queue_->remove_sender(); // last statement: it may resume coroutines that destroy *this
        }
    }

    void reset() noexcept {
        if (queue_ != nullptr) {
            Queue* q = std::exchange(queue_, nullptr);
            if (!closed_) q->remove_sender();
            q->release();
        }
    }

    Queue* queue_ = nullptr; // null once moved from
    bool closed_ = false;    // this endpoint called close(); it no longer counts as a sender
};

template <class Queue, bool Copyable> class sender_ref : protected sender_ref_base<Queue> {
  public:
    // Public, so that copying an SPMC sender reports "deleted", not "protected".
    sender_ref(const sender_ref&) = delete; // an SPMC sender is the one producer: move-only
    sender_ref& operator=(const sender_ref&) = delete;

  protected:
    using sender_ref_base<Queue>::sender_ref_base;
    sender_ref(sender_ref&&) noexcept = default;
    sender_ref& operator=(sender_ref&&) noexcept = default;
    ~sender_ref() = default;
};

template <class Queue> class sender_ref<Queue, true> : protected sender_ref_base<Queue> {
  protected:
    using sender_ref_base<Queue>::sender_ref_base;
    sender_ref(sender_ref&&) noexcept = default;
    sender_ref& operator=(sender_ref&&) noexcept = default;
    sender_ref(const sender_ref& other) noexcept : sender_ref_base<Queue>(nullptr) {
        this->copy_from(other);
    }
    sender_ref& operator=(const sender_ref& other) noexcept {
        if (this != &other) {
            sender_ref copy(other);
            *this = std::move(copy);
        }
        return *this;
    }
    ~sender_ref() = default;
};

/// The sending endpoint of every channel kind. SPMC (`Queue::multi_producer == false`): move-only,
/// send operations are non-const members, and two sends must not overlap (checked: see
/// COCHAN_CHECK and COCHAN_ASSERT). MPMC: copy makes a clone that counts as another sender; send
/// operations are const.
///
/// Thread safety: distinct objects: safe. Shared objects: unsafe, except that the const
/// operations of an MPMC sender may be called on one object from several threads at once.
///
/// Where a suspended send resumes: by default on the thread that completed it (the receiver
/// that freed a slot, the last receiver disconnecting, or the thread that requested the stop),
/// after the channel's lock is released, through a per-thread trampoline that keeps chains of
/// hand-offs in constant stack; with `.resume_on(post)`, wherever `post(handle)` resumes it.
template <class Queue> class basic_sender : private sender_ref<Queue, Queue::multi_producer> {
    using base = sender_ref<Queue, Queue::multi_producer>;
    static constexpr bool multi = Queue::multi_producer;
    static constexpr bool bounded = Queue::bounded;
    // The four kinds, named so the requires-clauses below read (and format) as words.
    static constexpr bool bounded_spmc = bounded && !multi;
    static constexpr bool bounded_mpmc = bounded && multi;
    static constexpr bool unbounded_spmc = !bounded && !multi;
    static constexpr bool unbounded_mpmc = !bounded && multi;
    static constexpr bool spmc = !multi;

  public:
    using value_type = typename Queue::value_type;
    using producers = typename Queue::producers; // for the factories

    basic_sender(adopt_t, Queue* q) noexcept : base(q) {}

    // ---- bounded: awaitable send --------------------------------------------------------------

    /// `co_await tx.send(v)`: waits until a slot is free, then enqueues `v` (or hands it straight
    /// to the oldest waiting receiver). Returns success, or `disconnected` with `v` back when
    /// every receiver is gone (also while waiting) or this sender was closed. Waiting senders
    /// are served in FIFO order; a freed slot is granted to the oldest, never taken by a later
    /// `try_send`. Exception safety: if moving `v` into the channel throws, the exception
    /// propagates from the `co_await` and the channel is unchanged.
    send_awaitable<Queue, resume_default, no_stop_token> send(value_type v) requires bounded_spmc {
        return make_send(std::move(v), no_stop_token{});
    }
    send_awaitable<Queue, resume_default, no_stop_token>
    send(value_type v) const requires bounded_mpmc {
        return make_send(std::move(v), no_stop_token{});
    }

    /// As `send(v)`, and a stop request on `token` while waiting completes it with `cancelled`
    /// and `v` back, unless it was already granted a slot (then it completes normally). A token
    /// already stopped when the send starts cancels it without touching the channel.
    /// On cancellation the coroutine resumes on the thread that called `request_stop()`.
    template <stoppable_token Token = default_stop_token>
    send_awaitable<Queue, resume_default, Token> send(value_type v,
                                                      Token token) requires bounded_spmc {
        return make_send(std::move(v), std::move(token));
    }
    template <stoppable_token Token = default_stop_token>
    send_awaitable<Queue, resume_default, Token> send(value_type v,
                                                      Token token) const requires bounded_mpmc {
        return make_send(std::move(v), std::move(token));
    }

    /// Enqueues `v` if a slot is free, without waiting: success, or `full` / `disconnected`
    /// with `v` back. Never takes a slot granted to a waiting sender. Exception safety: strong.
    send_result<value_type> try_send(value_type v) requires bounded_spmc { return send_now(v); }
    send_result<value_type> try_send(value_type v) const requires bounded_mpmc {
        return send_now(v);
    }

    /// `blocking_send(v)`: as `co_await send(v)` (optionally with a stop token), but blocks the
    /// calling thread while the channel is full. Threads and coroutines may wait on the same
    /// channel at once and are served in one FIFO; a blocked thread is woken by exactly the
    /// transition that completes its send (no polling). Do not call it from a coroutine that
    /// runs on a thread the channel's receivers need in order to make progress.
    /// The token by `const&`: it is read only before the call waits (its first step, and
    /// start() registering the stop callback), on this thread; a copy would cost two atomic
    /// count updates for nothing.
    template <stoppable_token Token = default_stop_token>
    COCHAN_DETAIL_INLINE send_result<value_type>
    blocking_send(value_type v, const Token& token = {}) requires bounded_spmc {
        return blocking(std::move(v), token);
    }
    template <stoppable_token Token = default_stop_token>
    COCHAN_DETAIL_INLINE send_result<value_type>
    blocking_send(value_type v, const Token& token = {}) const requires bounded_mpmc {
        return blocking(std::move(v), token);
    }

    /// As `blocking_send(v)`, but gives up at `deadline`: `timed_out` with `v` back (distinct
    /// from `cancelled`), unless a slot was granted first (then it succeeds). A deadline
    /// already passed still takes a free slot. Bounded senders only (an unbounded send never
    /// waits).
    template <class Clock, class Duration>
    send_result<value_type> blocking_send_until(
        value_type v,
        const std::chrono::time_point<Clock, Duration>& deadline) requires bounded_spmc {
        return blocking_until(std::move(v), deadline);
    }
    template <class Clock, class Duration>
    send_result<value_type> blocking_send_until(
        value_type v,
        const std::chrono::time_point<Clock, Duration>& deadline) const requires bounded_mpmc {
        return blocking_until(std::move(v), deadline);
    }
    /// `blocking_send_until(v, steady_clock::now() + timeout)`, the deadline saturated: a huge
    /// timeout (`seconds::max()`) waits without one (detail::deadline_after).
    template <class Rep, class Period>
    send_result<value_type>
    blocking_send_for(value_type v,
                      const std::chrono::duration<Rep, Period>& timeout) requires bounded_spmc {
        return blocking_until(std::move(v), detail::deadline_after(timeout));
    }
    template <class Rep, class Period>
    send_result<value_type> blocking_send_for(
        value_type v,
        const std::chrono::duration<Rep, Period>& timeout) const requires bounded_mpmc {
        return blocking_until(std::move(v), detail::deadline_after(timeout));
    }

    // ---- unbounded: synchronous send ----------------------------------------------------------

    /// Enqueues `v` at once (never waits): success, or `disconnected` with `v` back. A waiting
    /// receiver woken by it resumes inline on this thread (see the class comment) before this
    /// call returns, or later if this thread is already inside the trampoline. Exception
    /// safety: strong (`std::bad_alloc` or a throwing move of `T` propagate; `v` is destroyed
    /// with the argument, the channel is unchanged).
    send_result<value_type> send(value_type v) requires unbounded_spmc { return send_now(v); }
    send_result<value_type> send(value_type v) const requires unbounded_mpmc { return send_now(v); }

    /// `blocking_send(v)` on an unbounded channel is `send(v)`: it never waits. Provided so code
    /// written for the blocking API works with every channel kind.
    send_result<value_type> blocking_send(value_type v) requires unbounded_spmc {
        return send_now(v);
    }
    send_result<value_type> blocking_send(value_type v) const requires unbounded_mpmc {
        return send_now(v);
    }

    // ---- common mistakes ---------------------------------------------------------------------
    // Deleted, so generic code can still ask `requires { tx.try_send(v); }`, and each with its
    // message on the same line, which the compiler's "declared here" note quotes.

    void try_send(value_type) const requires(!bounded) = delete; // unbounded: send(v) never waits
    void send(value_type) const requires spmc = delete; // SPMC: sends need a non-const sender
    template <stoppable_token Token>
    void send(value_type, Token) const requires bounded_spmc = delete; // SPMC: non-const
    void try_send(value_type) const requires bounded_spmc = delete; // SPMC: non-const sender only
    void blocking_send(value_type) const requires spmc = delete;    // SPMC: non-const sender only
    template <stoppable_token Token>
    void blocking_send(value_type, const Token&) const requires bounded_spmc = delete; // SPMC

    // ---- connection and queries ---------------------------------------------------------------

    /// Disconnects this endpoint now, as its destruction would; later sends through it fail with
    /// `disconnected`. When it was the last sender, receivers drain the buffer and then see
    /// `disconnected`, and every waiting receiver is woken. Idempotent. Never waits.
    void close() noexcept {
        check();
        this->close_now();
    }

    /// True when sends through this endpoint can no longer succeed: it was closed, a receiver
    /// closed the channel, or every receiver is gone.
    bool is_closed() const noexcept { return check()->closed_ || queue()->sending_refused(); }
    /// Sender endpoints of the channel that are connected now (neither destroyed nor closed;
    /// this one included while it is): a snapshot.
    std::size_t sender_count() const noexcept { return queue()->sender_count(); }
    /// Receiver endpoints of the channel that are connected now (not destroyed): a snapshot.
    std::size_t receiver_count() const noexcept { return queue()->receiver_count(); }
    /// Values buffered now (a snapshot; values granted to waiting receivers are not counted).
    std::size_t size() const noexcept { return queue()->size(); }
    bool empty() const noexcept { return size() == 0; }
    /// The bound given to `bounded(capacity)`.
    std::size_t capacity() const noexcept requires bounded { return queue()->capacity(); }

    /// The source of an operation on this sender (detail/op_state.hpp): a counted reference to
    /// the queue and whether this endpoint was closed. Found by ADL; for the adapters and
    /// test harnesses, which reach a channel only through an operation state.
    friend op_source<Queue> make_op_source(const basic_sender& tx) noexcept {
        return {queue_ref<Queue>(tx.queue()), tx.closed_};
    }

  private:
    const basic_sender* check() const noexcept {
        COCHAN_CHECK(this->queue_ != nullptr, "use of a moved-from cochan sender");
        return this;
    }
    Queue* queue() const noexcept { return check()->queue_; }

    template <class Token>
    send_awaitable<Queue, resume_default, Token> make_send(value_type&& v, Token token) const {
        return {queue(), this->closed_, std::move(v), std::move(token)};
    }

    template <class Token>
    COCHAN_DETAIL_INLINE send_result<value_type> blocking(value_type&& v,
                                                          const Token& token) const {
        return blocking_with<Token>(std::move(v), !token.stop_requested(),
                                    [&](auto& op) { return op.run(token); });
    }
    template <class Clock, class Duration>
    send_result<value_type>
    blocking_until(value_type&& v, const std::chrono::time_point<Clock, Duration>& deadline) const {
        return blocking_with(std::move(v), true, [&](auto& op) { return op.run_until(deadline); });
    }

    /// A blocking send. Its first step is send()'s await_ready: unless `first_step` is false (a
    /// token already stopped, which run() cancels with the value back), a send that finds a
    /// free cell or a closed channel completes here, in one lock section, with no operation
    /// state, signal or stop callback. Otherwise `wait(op)` runs the operation state `op`.
    /// Always inline, with blocking() and blocking_send() (the first step only: the wait is
    /// blocking_wait()'s): with the token taken by `const&`, g++ otherwise leaves them out of
    /// line, and a send that completes at once pays for the calls (docs/decisions.md, D-033).
    /// `Token`: the token type `op` starts with.
    template <class Token = default_stop_token, class Wait>
    COCHAN_DETAIL_INLINE send_result<value_type> blocking_with(value_type&& v, bool first_step,
                                                               Wait wait) const {
        if (first_step && (this->closed_ || queue()->cell_hint())) {
            const typename Queue::send_status s = send_step(v);
            if (s != Queue::send_status::full) return outcome_of(s, v); // *this untouched
        }
        return blocking_wait<Token>(std::move(v), wait);
    }
    template <class Token, class Wait>
    send_result<value_type> blocking_wait(value_type&& v, Wait& wait) const {
        blocking_op<send_op_state<Queue, false, Token>> op(queue(), this->closed_, std::move(v));
        return wait(op);
    }

    send_result<value_type> send_now(value_type& v) const { return outcome_of(send_step(v), v); }

    /// The step of a send that does not wait: the queue's status for `v` (`ok`: the value is
    /// in; otherwise `v` is untouched). Unless it is `full`, nothing after it may touch *this
    /// or the queue: try_send resumed any waiter it woke, and that coroutine may have
    /// destroyed this endpoint.
    typename Queue::send_status send_step(value_type& v) const {
        Queue* q = queue();
        return this->closed_ ? Queue::send_status::disconnected : q->try_send(v);
    }

    /// A send's result from the queue's status: on `full` or `disconnected`, `v` goes back.
    static send_result<value_type> outcome_of(typename Queue::send_status s, value_type& v) {
        using status = typename Queue::send_status;
        switch (s) {
        case status::ok: return send_result<value_type>(std::in_place);
        case status::full:
            return send_result<value_type>(std::in_place_index<1>,
                                           send_error<value_type>{send_errc::full, std::move(v)});
        default:
            return send_result<value_type>(
                std::in_place_index<1>,
                send_error<value_type>{send_errc::disconnected, std::move(v)});
        }
    }
};

/// The receiving endpoint of every channel kind. Copy makes a clone that competes for the same
/// values; each value is delivered to exactly one receiver. The last receiver's destruction
/// destroys the buffered values and fails every waiting and later send with `disconnected`.
///
/// Thread safety: distinct objects: safe. Shared objects: the const members may be called on
/// one object from several threads at once; assignment and destruction may not.
///
/// Where a suspended receive resumes: by default on the thread that completed it (the sender
/// whose value it was granted, the last sender disconnecting, or the thread that requested the
/// stop), after the channel's lock is released, through a per-thread trampoline that keeps
/// chains of hand-offs in constant stack; with `.resume_on(post)`, wherever `post(handle)`
/// resumes it.
template <class Queue> class basic_receiver {
  public:
    using value_type = typename Queue::value_type;

    basic_receiver(adopt_t, Queue* q) noexcept : queue_(q) {}
    basic_receiver(const basic_receiver& other) noexcept : queue_(other.queue()) {
        queue_->retain();
        queue_->add_receiver();
    }
    basic_receiver(basic_receiver&& other) noexcept
        : queue_(std::exchange(other.queue_, nullptr)) {}
    basic_receiver& operator=(const basic_receiver& other) noexcept {
        if (this != &other) *this = basic_receiver(other);
        return *this;
    }
    basic_receiver& operator=(basic_receiver&& other) noexcept {
        if (this != &other) {
            reset();
            queue_ = std::exchange(other.queue_, nullptr);
        }
        return *this;
    }
    ~basic_receiver() { reset(); }

    /// `co_await rx.recv()`: the oldest buffered value, else waits for one. Waiting receivers
    /// are served in FIFO order: a value is granted to the oldest directly and no later
    /// `try_recv` can take it. Returns `disconnected` once every sender is gone and the buffer
    /// is drained. Exception safety: if moving the value throws, the exception propagates from
    /// the `co_await` and the value goes back to the head of the channel (when there is room).
    recv_awaitable<Queue, resume_default, no_stop_token> recv() const { return {queue(), {}}; }

    /// As `recv()`, and a stop request on `token` while waiting completes it with `cancelled`,
    /// unless it was already granted a value (then it completes with the value). A token
    /// already stopped when the receive starts cancels it without touching the channel. On
    /// cancellation the coroutine resumes on the thread that called `request_stop()`.
    template <stoppable_token Token = default_stop_token>
    recv_awaitable<Queue, resume_default, Token> recv(Token token) const {
        return recv_awaitable<Queue, resume_default, Token>(queue(), std::move(token));
    }

    /// `blocking_recv()`: as `co_await recv()` (optionally with a stop token), but blocks the
    /// calling thread while nothing is buffered. Threads and coroutines may wait on the same
    /// channel at once and are served in one FIFO; a blocked thread is woken by exactly the
    /// transition that completes its receive (no polling).
    /// The token by `const&`, as blocking_send()'s.
    template <stoppable_token Token = default_stop_token>
    recv_result<value_type> blocking_recv(const Token& token = {}) const {
        return blocking_with<Token>(!token.stop_requested(),
                                    [&](auto& op) { return op.run(token); });
    }

    /// As `blocking_recv()`, but gives up at `deadline`: `timed_out` then (distinct from
    /// `cancelled`), unless a value was granted first, which it returns. A deadline already
    /// passed still takes a buffered value. Measured with `Clock` (`steady_clock` for the
    /// `_for` form).
    template <class Clock, class Duration>
    recv_result<value_type>
    blocking_recv_until(const std::chrono::time_point<Clock, Duration>& deadline) const {
        return blocking_with(true, [&](auto& op) { return op.run_until(deadline); });
    }
    /// `blocking_recv_until(steady_clock::now() + timeout)`, the deadline saturated: a huge
    /// timeout (`seconds::max()`) waits without one (detail::deadline_after).
    template <class Rep, class Period>
    recv_result<value_type>
    blocking_recv_for(const std::chrono::duration<Rep, Period>& timeout) const {
        return blocking_recv_until(detail::deadline_after(timeout));
    }

    /// The oldest buffered value without waiting, or `empty` (a sender remains) or
    /// `disconnected` (none remains and the buffer is drained). Never takes a value granted to
    /// a waiting receiver. Exception safety: strong.
    recv_result<value_type> try_recv() const { return queue()->try_recv(); }

    /// `co_await rx.recv_many(out, max)`: appends up to `max` (>= 1) values to `out` (any
    /// container with `push_back(T&&)`), oldest first, and returns how many. Takes what is
    /// buffered in one lock section, each value freeing its slot (waiting senders are admitted
    /// in FIFO order); when nothing is buffered it waits like `recv()` for one value, then
    /// takes what else arrived, without waiting again. `disconnected` once every sender is gone
    /// (or a receiver closed the channel) and nothing is buffered. Resumes like `recv()`.
    /// Exception safety: if `push_back` or `T`'s move throws, the values appended so far stay
    /// in `out`, the rest stay in the channel in order, and the exception propagates.
    template <pushes<value_type> Out>
    recv_many_awaitable<Queue, Out, resume_default, no_stop_token>
    recv_many(Out& out, std::size_t max) const {
        return {queue(), out, max, {}};
    }
    /// As `recv_many(out, max)`; a stop request while it waits completes it with `cancelled`
    /// (a token already stopped cancels it without taking anything).
    template <pushes<value_type> Out, stoppable_token Token = default_stop_token>
    recv_many_awaitable<Queue, Out, resume_default, Token> recv_many(Out& out, std::size_t max,
                                                                     Token token) const {
        return {queue(), out, max, std::move(token)};
    }
    /// As `recv_many(out, max)` but never waits: `empty` when nothing is buffered.
    template <pushes<value_type> Out>
    recv_result<std::size_t> try_recv_many(Out& out, std::size_t max) const {
        COCHAN_CHECK(max >= 1, "try_recv_many(out, max) needs max >= 1");
        return queue()->try_recv_many(out, max);
    }
    template <class Out> void recv_many(Out&, std::size_t) const = delete; // out: no push_back(T&&)
    template <class Out>
    void try_recv_many(Out&, std::size_t) const = delete; // out: no push_back(T&&)

    /// `rx.close()`: closes the channel for sending, from any receiver. Later sends fail with
    /// `disconnected` and their value back; waiting senders complete `disconnected` with
    /// theirs; receivers drain what is buffered, then see `disconnected` (waiting receivers,
    /// which wait only while nothing is buffered, complete at once); `is_closed()` is true on
    /// every endpoint. Idempotent; never waits. The operations it completes resume as on a
    /// disconnection: inline on this thread (through its trampoline), or through their
    /// `resume_on` posters. Thread-safe.
    void close() const noexcept { queue()->close_sending(); }

    /// True once no value will arrive any more: every sender is gone or a receiver closed the
    /// channel (buffered values may remain: see `empty()`).
    bool is_closed() const noexcept { return queue()->sending_ended(); }
    /// As the sender's: connected senders, connected receivers (this one included).
    std::size_t sender_count() const noexcept { return queue()->sender_count(); }
    std::size_t receiver_count() const noexcept { return queue()->receiver_count(); }
    /// Values buffered now (a snapshot; values granted to waiting receivers are not counted).
    std::size_t size() const noexcept { return queue()->size(); }
    bool empty() const noexcept { return size() == 0; }
    /// The bound given to `bounded(capacity)`.
    std::size_t capacity() const noexcept requires Queue::bounded { return queue()->capacity(); }
    void capacity() const requires(!Queue::bounded) = delete; // unbounded: it has no capacity()

    /// As basic_sender's make_op_source (a receiver is never "closed").
    friend op_source<Queue> make_op_source(const basic_receiver& rx) noexcept {
        return {queue_ref<Queue>(rx.queue()), false};
    }
    /// The queue, without a reference: for an operation that ends before the receiver can
    /// (try_select's pass). Found by ADL.
    friend Queue* queue_of(const basic_receiver& rx) noexcept { return rx.queue(); }

  private:
    Queue* queue() const noexcept {
        COCHAN_CHECK(queue_ != nullptr, "use of a moved-from cochan receiver");
        return queue_;
    }

    /// A blocking receive. Its first step is recv()'s await_ready: unless `first_step` is false
    /// (a token already stopped, which run() cancels without taking anything), a receive that
    /// finds a value or the end completes here, in one lock section, with no operation state,
    /// signal or stop callback. Otherwise `wait(op)` runs the operation state `op`, which starts
    /// with a `Token`.
    template <class Token = default_stop_token, class Wait>
    recv_result<value_type> blocking_with(bool first_step, Wait wait) const {
        Queue* q = queue();
        if constexpr (Queue::starts_in_await_ready) {
            if (first_step && q->value_hint()) {
                std::optional<value_type> v;
                switch (q->take_at_once(v)) {
                case Queue::take_status::taken:
                    try {
                        return recv_result<value_type>(std::in_place, std::move(*v));
                    } catch (...) { // `T`'s move threw: the value goes back, first in line
                        q->give_back(v, false);
                        throw;
                    }
                case Queue::take_status::ended:
                    return recv_result<value_type>(std::in_place_index<1>, recv_errc::disconnected);
                case Queue::take_status::empty: break;
                }
            }
        }
        blocking_op<recv_op_state<Queue, Token>> op(q);
        return wait(op);
    }

    void reset() noexcept {
        if (queue_ != nullptr) {
            Queue* q = std::exchange(queue_, nullptr);
            q->remove_receiver();
            q->release();
        }
    }

    Queue* queue_ = nullptr; // null once moved from
};

} // namespace cochan::detail
