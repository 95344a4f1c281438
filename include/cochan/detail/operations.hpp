// cochan: the awaitable send and receive operations shared by every channel kind.
#pragma once

#include <cochan/detail/competing_queue.hpp>
#include <cochan/detail/concepts.hpp>
#include <cochan/detail/trampoline.hpp>
#include <cochan/result.hpp>

#include <condition_variable>
#include <coroutine>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace cochan::detail {

/// Default resumption: on the thread that completes the operation, after the lock is released,
/// through the per-thread trampoline (constant stack over chains of hand-offs).
struct resume_inline {
    void operator()(waiter_base* w) noexcept { trampoline::resume(w); }
};

/// `resume_on(post)`: the completer calls `post(handle)` once, after the lock is released.
/// If `post` throws (an executor that cannot allocate its queue node), the coroutine is not
/// lost: it resumes inline through the trampoline instead, on the completing thread. A poster
/// must therefore not resume the coroutine and then throw.
template <class Post> struct resume_via {
    Post post_;
    void operator()(waiter_base* w) noexcept {
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
    if constexpr (coroutine_poster<P>) {
        return std::decay_t<P>(std::forward<P>(target));
    } else {
        return poster_traits<std::decay_t<P>>::make(std::forward<P>(target));
    }
}

template <class P> using resume_via_t = resume_via<decltype(make_poster(std::declval<P>()))>;

/// Wakes a thread blocked in `blocking_recv` / `blocking_send`. The flag is set and the
/// condition variable notified while holding the mutex, so the blocked thread cannot return
/// (and destroy this object, which lives on its stack) before the notifier is done with it.
/// Thread-safe.
class blocking_signal {
  public:
    void signal() noexcept {
        std::lock_guard lock(mutex_);
        done_ = true;
        cv_.notify_one();
    }
    void wait() noexcept {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return done_; });
    }

  private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool done_ = false; // guarded by mutex_
};

/// Resumption policy of the blocking calls: the "coroutine" is a blocked thread.
struct resume_signal {
    blocking_signal* signal_;
    void operator()(waiter_base*) noexcept { signal_->signal(); }
};

/// Runs an awaitable to completion on the calling thread, blocking it while the operation
/// waits. `make(resume_signal)` builds the awaitable with that resumption policy.
template <class Make> auto run_blocking(Make make) {
    blocking_signal signal;
    auto op = make(resume_signal{&signal}); // destroyed before `signal`
    if (op.await_suspend(std::noop_coroutine())) signal.wait();
    return op.await_resume();
}

/// `co_await rx.recv()`. Holds the waiter node, so it is awaited in place: neither copyable nor
/// movable. Thread safety: one awaitable is awaited by one coroutine.
template <class Core, class Resume = resume_inline>
class [[nodiscard]] recv_awaitable : private recv_waiter<typename Core::value_type> {
    using T = typename Core::value_type;
    template <class, class> friend class recv_awaitable;

  public:
    recv_awaitable(Core* core, std::stop_token token, Resume resume = {})
        : core_(core), token_(std::move(token)), resume_(std::move(resume)) {}
    recv_awaitable(const recv_awaitable&) = delete;
    recv_awaitable& operator=(const recv_awaitable&) = delete;

    ~recv_awaitable() {
        if (finished_) return;
        // Destroyed while suspended (its coroutine was destroyed), never awaited, or after
        // await_resume threw: unlink, and give back a value the caller will never see. A
        // completed receive may still be queued on this thread's trampoline: withdraw it, so
        // nothing resumes the destroyed frame.
        stop_cb_.reset();
        core_->unlink_recv(*this);
        trampoline::withdraw(this);
        if (this->slot_.has_value()) {
            core_->hand_back(this->slot_, this->outcome_ == outcome::granted);
        }
        release_queue();
    }

    /// The same receive, but the woken coroutine is resumed by `post(handle)` instead of
    /// inline on the completing thread. Call before awaiting.
    /// `post` is an invocable taking `std::coroutine_handle<>` (a thread pool's enqueue, an
    /// event loop's post), or an executor that `poster_traits` adapts (`cochan/asio.hpp`: any
    /// Asio executor).
    template <resume_target Post>
    recv_awaitable<Core, resume_via_t<Post>> resume_on(Post&& post) && {
        finished_ = true; // this one is never awaited: its destructor has nothing to undo
        return {core_, std::move(token_),
                resume_via_t<Post>{make_poster(std::forward<Post>(post))}};
    }

    bool await_ready() const noexcept { return false; }

    bool await_suspend(std::coroutine_handle<> h) {
        this->handle_ = h;
        this->notify_ = &notify;
        if (token_.stop_possible()) {
            // Registered before linking: a stop that fires now only marks stop_seen_, so the
            // coroutine is never resumed from inside this function.
            stop_cb_.emplace(token_, canceller{this});
        }
        // A stop request from another thread can land here, before the waiter is linked.
        COCHAN_DETAIL_INTERLEAVE(recv_before_link);
        // true: linked. Another thread may resume (and destroy) this coroutine at once, so
        // nothing below this line may touch *this.
        return core_->recv_or_wait(*this);
    }

    recv_result<T> await_resume() {
        stop_cb_.reset(); // waits for a stop callback still running on another thread
        switch (this->outcome_) {
        case outcome::ok:
        case outcome::granted: {
            // The result is built in place, in one move from the slot; the bookkeeping runs
            // only once that move succeeded. If it throws, the value is still in the slot and
            // the destructor hands it back.
            struct on_success {
                recv_awaitable& self;
                int exceptions =
                    std::is_nothrow_move_constructible_v<T> ? 0 : std::uncaught_exceptions();
                ~on_success() {
                    if constexpr (!std::is_nothrow_move_constructible_v<T>) {
                        if (std::uncaught_exceptions() != exceptions) return;
                    }
                    self.slot_.reset();
                    self.finished_ = true;
                    if constexpr (Core::bounded) {
                        if (self.outcome_ == outcome::granted) self.core_->release_grant();
                    }
                    self.release_queue();
                }
            } done{*this};
            return recv_result<T>(std::in_place, std::move(*this->slot_));
        }
        case outcome::disconnected:
            finished_ = true;
            release_queue();
            return recv_result<T>(std::in_place_index<1>, recv_errc::disconnected);
        default:
            finished_ = true;
            release_queue();
            return recv_result<T>(std::in_place_index<1>, recv_errc::cancelled);
        }
    }

  private:
    /// Drops the reference a linked waiter holds (see recv_or_wait): the queue may be freed
    /// here if every endpoint is gone, so nothing may touch it afterwards.
    void release_queue() noexcept {
        if (this->keeps_queue_) {
            this->keeps_queue_ = false;
            core_->release();
        }
    }

    struct canceller {
        recv_awaitable* self;
        void operator()() const noexcept { self->core_->cancel_recv(*self); }
    };

    static void notify(waiter_base* w) noexcept {
        auto* self = static_cast<recv_awaitable*>(static_cast<recv_waiter<T>*>(w));
        self->resume_(w);
    }

    Core* core_;
    std::stop_token token_;
    std::optional<std::stop_callback<canceller>> stop_cb_;
    [[no_unique_address]] Resume resume_;
    bool finished_ = false; // owner only: the outcome was consumed, nothing left to undo
};

/// `co_await tx.send(v)` on a bounded channel. Holds the waiter node and the value, so it is
/// awaited in place: neither copyable nor movable. Thread safety: one awaitable is awaited by
/// one coroutine.
template <class Core, class Resume = resume_inline>
class [[nodiscard]] send_awaitable : private send_waiter<typename Core::value_type> {
    using T = typename Core::value_type;
    template <class, class> friend class send_awaitable;

  public:
    send_awaitable(Core* core, bool closed, T&& value, std::stop_token token, Resume resume = {})
        : core_(core), value_(std::move(value)), token_(std::move(token)),
          resume_(std::move(resume)), closed_(closed) {}
    send_awaitable(const send_awaitable&) = delete;
    send_awaitable& operator=(const send_awaitable&) = delete;

    ~send_awaitable() {
        if (finished_) return;
        stop_cb_.reset();
        core_->unlink_send(*this);
        trampoline::withdraw(this); // a completed send queued on this thread's trampoline
        if (this->holds_producer_) core_->leave_producer();
        release_queue();
    }

    /// The same send, but the woken coroutine is resumed by `post(handle)` instead of inline on
    /// the completing thread. Call before awaiting.
    /// `post`: as for `recv_awaitable::resume_on`.
    template <resume_target Post>
    send_awaitable<Core, resume_via_t<Post>> resume_on(Post&& post) && {
        finished_ = true;
        return {core_, closed_, std::move(value_), std::move(token_),
                resume_via_t<Post>{make_poster(std::forward<Post>(post))}};
    }

    bool await_ready() const noexcept { return false; }

    bool await_suspend(std::coroutine_handle<> h) {
        if (closed_) {
            this->outcome_ = outcome::disconnected;
            return false;
        }
        this->handle_ = h;
        this->notify_ = &notify;
        this->offered_ = std::addressof(value_);
        if (token_.stop_possible()) stop_cb_.emplace(token_, canceller{this});
        COCHAN_DETAIL_INTERLEAVE(send_before_link); // as recv_before_link
        // true: linked; nothing below may touch *this (see recv_awaitable::await_suspend).
        return core_->send_or_wait(*this);
    }

    send_result<T> await_resume() {
        stop_cb_.reset();
        finished_ = true;
        if (this->holds_producer_) core_->leave_producer();
        release_queue(); // the rest reads only this awaitable
        switch (this->outcome_) {
        case outcome::ok: return send_result<T>(std::in_place);
        case outcome::failed: std::rethrow_exception(this->error_);
        case outcome::cancelled:
            return send_result<T>(std::in_place_index<1>,
                                  send_error<T>{send_errc::cancelled, std::move(value_)});
        default:
            return send_result<T>(std::in_place_index<1>,
                                  send_error<T>{send_errc::disconnected, std::move(value_)});
        }
    }

  private:
    /// As recv_awaitable::release_queue().
    void release_queue() noexcept {
        if (this->keeps_queue_) {
            this->keeps_queue_ = false;
            core_->release();
        }
    }

    struct canceller {
        send_awaitable* self;
        void operator()() const noexcept { self->core_->cancel_send(*self); }
    };

    static void notify(waiter_base* w) noexcept {
        auto* self = static_cast<send_awaitable*>(static_cast<send_waiter<T>*>(w));
        self->resume_(w);
    }

    Core* core_;
    T value_; // moved into the channel by whoever grants the slot; handed back on failure
    std::stop_token token_;
    std::optional<std::stop_callback<canceller>> stop_cb_;
    [[no_unique_address]] Resume resume_;
    bool closed_;           // the sender endpoint was closed when the send was made
    bool finished_ = false; // owner only: the outcome was consumed, nothing left to undo
};

} // namespace cochan::detail
