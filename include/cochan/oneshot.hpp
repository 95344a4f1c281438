// cochan: one-shot channels: one value from one sender to one receiver, for request/reply.
// Compiles on its own.
#pragma once

#include <cochan/concepts.hpp>
#include <cochan/detail/config.hpp>
#include <cochan/detail/endpoints.hpp> // adopt_t
#include <cochan/detail/oneshot_core.hpp>
#include <cochan/detail/op_state.hpp>
#include <cochan/detail/operations.hpp>
#include <cochan/result.hpp>
#include <cochan/stop_token.hpp>

#include <chrono>
#include <utility>

namespace cochan {

/// The sending half of a one-shot channel (`cochan::oneshot<T>()`): sends at most one value,
/// and `send` never waits. Move-only. Closing or destroying it without sending tells the
/// receiver that no value will come (`disconnected`).
///
/// Thread safety: the sender and its receiver may be used on different threads at once; one
/// sender object must not be used by two threads at once.
template <channel_value T> class oneshot_sender {
    using core = detail::oneshot_core<T>;

  public:
    using value_type = T;

    /// For `cochan::oneshot<T>()`: adopts one reference to a new core.
    oneshot_sender(detail::adopt_t, core* c) noexcept : core_(c) {}
    oneshot_sender(const oneshot_sender&) = delete; // one value, one sender: move it, never copy
    oneshot_sender& operator=(const oneshot_sender&) = delete; // one sender: move it, never copy
    /// The source becomes moved-from: any use of it but assignment and destruction aborts with
    /// a message (`COCHAN_CHECK`, every build).
    oneshot_sender(oneshot_sender&& other) noexcept : core_(std::exchange(other.core_, nullptr)) {}
    /// Disconnects the sender assigned over (as its destruction would), then takes `other`'s.
    oneshot_sender& operator=(oneshot_sender&& other) noexcept {
        if (this != &other) {
            reset();
            core_ = std::exchange(other.core_, nullptr);
        }
        return *this;
    }
    /// Disconnects, unless it was closed: a receive waiting for a value that was never sent
    /// completes `disconnected` (resumed on this thread by default, inside the destructor). A
    /// value already sent stays for the receiver.
    ~oneshot_sender() { reset(); }

    /// Sends `v`, never waiting: success, or the error with `v` back:
    /// - `send_errc::disconnected`: the receiver is gone, or this sender was closed;
    /// - `send_errc::full`: a value was already sent through this one-shot (it has room for one).
    /// A receive waiting for the value is granted it under the lock and resumes by its own
    /// policy: by default inline on this thread, before `send` returns (queued until the
    /// running coroutine suspends if this thread is already inside cochan's trampoline); with
    /// `.resume_on(post)`, through `post`. The woken coroutine may destroy this sender, so
    /// nothing touches it afterwards. Exception safety: strong (a throwing move of `T` leaves
    /// the one-shot unchanged, the exception propagates and `v` is destroyed with the
    /// parameter). Thread safety: not concurrently with another use of this object.
    send_result<T> send(T v) {
        using status = typename core::send_status;
        const status s = get()->try_send(v);
        // Nothing below may touch *this or the core: send() resumed the receive it woke, and
        // that coroutine may have destroyed this endpoint (and with it the last reference).
        switch (s) {
        case status::ok: return send_result<T>(std::in_place);
        case status::full:
            return send_result<T>(std::in_place_index<1>,
                                  send_error<T>{send_errc::full, std::move(v)});
        default:
            return send_result<T>(std::in_place_index<1>,
                                  send_error<T>{send_errc::disconnected, std::move(v)});
        }
    }

    /// Disconnects this sender now, as its destruction would; later sends fail `disconnected`
    /// with their value. Without a value sent, the receiver sees `disconnected`, and a waiting
    /// receive completes at once (resumed on this thread by default, before `close()` returns;
    /// or through its `resume_on` poster). A value already sent stays for the receiver.
    /// Idempotent; never waits. Thread safety: not concurrently with another use of this object.
    void close() noexcept {
        get()->remove_sender(); // last statement: it may resume a coroutine that destroys *this
    }

    /// True when a send can no longer succeed: this sender was closed, a value was already
    /// sent, or the receiver is gone (so a server can skip a reply nobody waits for). A
    /// snapshot; takes the lock. Thread safety: as `send`.
    bool is_closed() const noexcept { return get()->sending_refused(); }

    /// The source of an operation on this sender (detail/op_state.hpp), for adapters: a counted
    /// reference to the core (whose own state says whether this sender was closed). Found by
    /// ADL. `cochan::asio::async_send(tx, v, token)` takes a one-shot sender through it.
    friend detail::op_source<core> make_op_source(const oneshot_sender& tx) noexcept {
        return {detail::queue_ref<core>(tx.get()), false};
    }

  private:
    core* get() const noexcept {
        COCHAN_CHECK(core_ != nullptr, "use of a moved-from cochan oneshot sender");
        return core_;
    }

    void reset() noexcept {
        if (core_ != nullptr) {
            core* c = std::exchange(core_, nullptr);
            c->remove_sender(); // idempotent: nothing happens if this sender was closed
            c->release();
        }
    }

    core* core_ = nullptr; // null once moved from
};

/// The receiving half of a one-shot channel (`cochan::oneshot<T>()`): receives the one value,
/// or `disconnected` once the sender is gone without sending (or the value was taken).
/// Move-only. Destroying it makes every send fail `disconnected` with its value back, and
/// destroys a value sent but not received (outside the channel's lock, exactly once).
///
/// Where a suspended receive resumes: by default on the thread that completed it (the sender's
/// thread inside `send`, the thread that closed or destroyed the sender, or the thread that
/// requested the stop), after the lock is released, through that thread's trampoline; with
/// `.resume_on(post)`, wherever `post(handle)` resumes it. A receive that completes without
/// waiting does not suspend.
///
/// Thread safety: the receiver and its sender may be used on different threads at once. One
/// receiver object runs one receive at a time: a receive started while another one waits
/// aborts with a message in every build (`COCHAN_CHECK`); `try_recv` and `is_closed` may run
/// on other threads while one waits.
template <channel_value T> class oneshot_receiver {
    using core = detail::oneshot_core<T>;

  public:
    using value_type = T;

    /// For `cochan::oneshot<T>()`: adopts one reference to a new core.
    oneshot_receiver(detail::adopt_t, core* c) noexcept : core_(c) {}
    oneshot_receiver(const oneshot_receiver&) = delete; // one value, one receiver: move it
    oneshot_receiver& operator=(const oneshot_receiver&) = delete; // one receiver: move it
    /// The source becomes moved-from (any use but assignment and destruction aborts).
    oneshot_receiver(oneshot_receiver&& other) noexcept
        : core_(std::exchange(other.core_, nullptr)) {}
    /// Disconnects the receiver assigned over (as its destruction would), then takes `other`'s.
    oneshot_receiver& operator=(oneshot_receiver&& other) noexcept {
        if (this != &other) {
            reset();
            core_ = std::exchange(other.core_, nullptr);
        }
        return *this;
    }
    /// Disconnects: later sends fail `disconnected` with their value back, and a value sent but
    /// not received is destroyed (outside the lock). A receive still waiting (in a coroutine
    /// that outlives this receiver) completes `disconnected`, resumed by its own policy (by
    /// default on this thread, inside the destructor).
    ~oneshot_receiver() { reset(); }

    /// `co_await rx.recv()`: the value, waiting until it is sent; `recv_errc::disconnected` when
    /// the sender is gone without sending, or the value was already taken. Resumes as the class
    /// comment says; `.resume_on(post)` works as on a channel's receive. Exception safety: the
    /// value is moved twice (into the awaitable, then into the result); if the first move
    /// throws, the exception propagates from the `co_await` and the value stays in the
    /// one-shot; if the second throws, it propagates and the value goes back into the one-shot
    /// (the next receive gets it). Destroying the coroutine after the value was granted but
    /// before it resumed gives the value back the same way (or destroys it, once, if the
    /// receiver is gone).
    detail::recv_awaitable<core, detail::resume_default, detail::no_stop_token> recv() {
        return {get(), {}};
    }

    /// As `recv()`, and a stop request on `token` while it waits completes it with
    /// `recv_errc::cancelled`, unless the value was already granted (then it completes with
    /// the value). A token already stopped cancels it without taking anything, even a value
    /// already sent. On cancellation the coroutine resumes on the thread that called
    /// `request_stop()` (or through `post`).
    template <stoppable_token Token = default_stop_token>
    detail::recv_awaitable<core, detail::resume_default, Token> recv(Token token) {
        return detail::recv_awaitable<core, detail::resume_default, Token>(get(), std::move(token));
    }

    /// The value if it was sent, without waiting; else `recv_errc::empty` (the sender may still
    /// send) or `recv_errc::disconnected` (the sender is gone without sending, or the value was
    /// taken). Exception safety: strong (the value is moved once, into the result; if that
    /// throws, it stays).
    recv_result<T> try_recv() { return get()->try_recv(); }

    /// As `co_await recv(token)`, but blocks the calling thread while it waits; it is woken by
    /// exactly the transition that completes it (the send, the sender's disconnection or the
    /// stop request). Do not call it from a coroutine. Exception safety: as `recv`.
    template <stoppable_token Token = default_stop_token>
    recv_result<T> blocking_recv(const Token& token = {}) {
        detail::blocking_op<detail::recv_op_state<core, Token>> op(get());
        return op.run(token);
    }

    /// As `blocking_recv()`, but gives up at `deadline`: `recv_errc::timed_out` then (distinct
    /// from `cancelled`), unless the value was granted first (decided under the lock), which it
    /// returns. A deadline already passed still takes a value already sent.
    template <class Clock, class Duration>
    recv_result<T> blocking_recv_until(const std::chrono::time_point<Clock, Duration>& deadline) {
        detail::blocking_op<detail::recv_op_state<core>> op(get());
        return op.run_until(deadline);
    }
    /// `blocking_recv_until(steady_clock::now() + timeout)`, the deadline saturated: a huge
    /// timeout (`seconds::max()`) waits without one (detail::deadline_after).
    template <class Rep, class Period>
    recv_result<T> blocking_recv_for(const std::chrono::duration<Rep, Period>& timeout) {
        return blocking_recv_until(detail::deadline_after(timeout));
    }

    /// True when a receive can no longer produce a value: the value was taken, or the sender
    /// is gone (closed or destroyed) without sending. Unlike a channel receiver's, false while a
    /// value sent waits to be received. A snapshot; takes the lock. Thread-safe (see the class
    /// comment).
    bool is_closed() const noexcept { return get()->receiving_ended(); }

    /// The source of an operation on this receiver (detail/op_state.hpp): a counted reference
    /// to the core. Found by ADL; for adapters and test harnesses, as a channel receiver's.
    friend detail::op_source<core> make_op_source(const oneshot_receiver& rx) noexcept {
        return {detail::queue_ref<core>(rx.get()), false};
    }

  private:
    core* get() const noexcept {
        COCHAN_CHECK(core_ != nullptr, "use of a moved-from cochan oneshot receiver");
        return core_;
    }

    void reset() noexcept {
        if (core_ != nullptr) {
            core* c = std::exchange(core_, nullptr);
            c->remove_receiver(); // destroys a value still stored, outside the lock
            c->release();
        }
    }

    core* core_ = nullptr; // null once moved from
};

/// A new one-shot channel: its sender and its receiver, both connected. One allocation (the
/// shared state, holding the value's storage); no operation allocates afterwards. Throws
/// `std::bad_alloc`. Thread safety: may be called from any thread.
template <channel_value T> std::pair<oneshot_sender<T>, oneshot_receiver<T>> oneshot() {
    auto* c = new detail::oneshot_core<T>(); // two references: the sender's and the receiver's
    return {oneshot_sender<T>(detail::adopt_t{}, c), oneshot_receiver<T>(detail::adopt_t{}, c)};
}

} // namespace cochan
