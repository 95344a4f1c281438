// cochan: the sender and receiver endpoint templates behind the four public channel kinds.
#pragma once

#include <cochan/detail/competing_queue.hpp>
#include <cochan/detail/config.hpp>
#include <cochan/detail/operations.hpp>
#include <cochan/result.hpp>

#include <cstddef>
#include <stop_token>
#include <utility>

namespace cochan::detail {

/// Tag for the factories: the endpoint adopts one reference to a new queue.
struct adopt_t {
    explicit adopt_t() = default;
};

/// Lets adapters (`cochan/asio.hpp`) reach an endpoint's queue. Not part of the public API.
struct core_access {
    template <class Endpoint> static auto* core(const Endpoint& e) noexcept { return e.core(); }
    template <class Endpoint> static bool closed(const Endpoint& e) noexcept { return e.closed_; }
};

/// A counted reference to the queue held by a sender, with its connection state.
/// Copying is defined only for MPMC (see `sender_ref`).
template <class Core> class sender_ref_base {
  protected:
    sender_ref_base(Core* core) noexcept : core_(core) {}
    sender_ref_base(sender_ref_base&& other) noexcept
        : core_(std::exchange(other.core_, nullptr)), closed_(std::exchange(other.closed_, false)) {
    }
    sender_ref_base& operator=(sender_ref_base&& other) noexcept {
        if (this != &other) {
            reset();
            core_ = std::exchange(other.core_, nullptr);
            closed_ = std::exchange(other.closed_, false);
        }
        return *this;
    }
    ~sender_ref_base() { reset(); }

    /// Clone: a clone of a closed sender is closed too.
    void copy_from(const sender_ref_base& other) noexcept {
        COCHAN_CHECK(other.core_ != nullptr, "copy of a moved-from cochan sender");
        core_ = other.core_;
        closed_ = other.closed_;
        core_->retain();
        if (!closed_) core_->add_sender();
    }

    /// Disconnects this endpoint now (if not already closed) and keeps the reference.
    void close_now() noexcept {
        if (!closed_) {
            closed_ = true;
            core_->remove_sender(); // last statement: it may resume coroutines that destroy *this
        }
    }

    void reset() noexcept {
        if (core_ != nullptr) {
            Core* core = std::exchange(core_, nullptr);
            if (!closed_) core->remove_sender();
            core->release();
        }
    }

    Core* core_ = nullptr; // null once moved from
    bool closed_ = false;  // this endpoint called close(); it no longer counts as a sender
};

template <class Core, bool Copyable> class sender_ref : protected sender_ref_base<Core> {
  public:
    // Public, so that copying an SPMC sender reports "deleted", not "protected".
    sender_ref(const sender_ref&) = delete; // an SPMC sender is the one producer: move-only
    sender_ref& operator=(const sender_ref&) = delete;

  protected:
    using sender_ref_base<Core>::sender_ref_base;
    sender_ref(sender_ref&&) noexcept = default;
    sender_ref& operator=(sender_ref&&) noexcept = default;
    ~sender_ref() = default;
};

template <class Core> class sender_ref<Core, true> : protected sender_ref_base<Core> {
  protected:
    using sender_ref_base<Core>::sender_ref_base;
    sender_ref(sender_ref&&) noexcept = default;
    sender_ref& operator=(sender_ref&&) noexcept = default;
    sender_ref(const sender_ref& other) noexcept : sender_ref_base<Core>(nullptr) {
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

/// The sending endpoint of every channel kind. SPMC (`Core::multi_producer == false`): move-only,
/// send operations are non-const members, and two sends must not overlap (debug builds
/// assert). MPMC: copy makes a clone that counts as another sender; send operations are const.
///
/// Thread safety: distinct objects: safe. Shared objects: unsafe, except that the const
/// operations of an MPMC sender may be called on one object from several threads at once.
///
/// Where a suspended send resumes: by default on the thread that completed it (the receiver
/// that freed a slot, the last receiver disconnecting, or the thread that requested the stop),
/// after the channel's lock is released, through a per-thread trampoline that keeps chains of
/// hand-offs in constant stack; with `.resume_on(post)`, wherever `post(handle)` resumes it.
template <class Core> class basic_sender : private sender_ref<Core, Core::multi_producer> {
    using base = sender_ref<Core, Core::multi_producer>;
    static constexpr bool multi = Core::multi_producer;
    static constexpr bool bounded = Core::bounded;

  public:
    using value_type = typename Core::value_type;

    basic_sender(adopt_t, Core* core) noexcept : base(core) {}

    // ---- bounded: awaitable send --------------------------------------------------------------

    /// `co_await tx.send(v)`: waits until a slot is free, then enqueues `v` (or hands it straight
    /// to the oldest waiting receiver). Returns success, or `disconnected` with `v` back when
    /// every receiver is gone (also while waiting) or this sender was closed. Waiting senders
    /// are served in FIFO order; a freed slot is granted to the oldest, never taken by a later
    /// `try_send`. Exception safety: if moving `v` into the channel throws, the exception
    /// propagates from the `co_await` and the channel is unchanged.
    send_awaitable<Core> send(value_type v) requires(bounded && !multi) {
        return make_send(std::move(v), {});
    }
    send_awaitable<Core> send(value_type v) const requires(bounded&& multi) {
        return make_send(std::move(v), {});
    }

    /// As `send(v)`, and a stop request on `token` while waiting completes it with `cancelled`
    /// and `v` back, unless it was already granted a slot (then it completes normally). A token
    /// already stopped when the send starts cancels it without touching the channel.
    /// On cancellation the coroutine resumes on the thread that called `request_stop()`.
    send_awaitable<Core> send(value_type v, std::stop_token token) requires(bounded && !multi) {
        return make_send(std::move(v), std::move(token));
    }
    send_awaitable<Core> send(value_type v, std::stop_token token) const requires(bounded&& multi) {
        return make_send(std::move(v), std::move(token));
    }

    /// Enqueues `v` if a slot is free, without waiting: success, or `full` / `disconnected`
    /// with `v` back. Never takes a slot granted to a waiting sender. Exception safety: strong.
    send_result<value_type> try_send(value_type v) requires(bounded && !multi) {
        return send_now(v);
    }
    send_result<value_type> try_send(value_type v) const requires(bounded&& multi) {
        return send_now(v);
    }

    /// `blocking_send(v)`: as `co_await send(v)` (optionally with a stop token), but blocks the
    /// calling thread while the channel is full. Threads and coroutines may wait on the same
    /// channel at once and are served in one FIFO; a blocked thread is woken by exactly the
    /// transition that completes its send (no polling). Do not call it from a coroutine that
    /// runs on a thread the channel's receivers need in order to make progress.
    send_result<value_type> blocking_send(value_type v,
                                          std::stop_token token = {}) requires(bounded && !multi) {
        return blocking(std::move(v), std::move(token));
    }
    send_result<value_type> blocking_send(value_type v, std::stop_token token = {}) const
        requires(bounded&& multi) {
        return blocking(std::move(v), std::move(token));
    }

    // ---- unbounded: synchronous send ----------------------------------------------------------

    /// Enqueues `v` at once (never waits): success, or `disconnected` with `v` back. A waiting
    /// receiver woken by it resumes inline on this thread (see the class comment) before this
    /// call returns, or later if this thread is already inside the trampoline. Exception
    /// safety: strong (`std::bad_alloc` or a throwing move of `T` propagate; `v` is destroyed
    /// with the argument, the channel is unchanged).
    send_result<value_type> send(value_type v) requires(!bounded && !multi) { return send_now(v); }
    send_result<value_type> send(value_type v) const requires(!bounded && multi) {
        return send_now(v);
    }

    /// `blocking_send(v)` on an unbounded channel is `send(v)`: it never waits. Provided so code
    /// written for the blocking API works with every channel kind.
    send_result<value_type> blocking_send(value_type v) requires(!bounded && !multi) {
        return send_now(v);
    }
    send_result<value_type> blocking_send(value_type v) const requires(!bounded && multi) {
        return send_now(v);
    }

    // ---- connection and queries ---------------------------------------------------------------

    /// Disconnects this endpoint now, as its destruction would; later sends through it fail with
    /// `disconnected`. When it was the last sender, receivers drain the buffer and then see
    /// `disconnected`, and every waiting receiver is woken. Idempotent. Never waits.
    void close() noexcept {
        check();
        this->close_now();
    }

    /// True when sends through this endpoint can no longer succeed: it was closed, or every
    /// receiver is gone.
    bool is_closed() const noexcept { return check()->closed_ || core()->receivers_gone(); }
    /// Values buffered now (a snapshot; values granted to waiting receivers are not counted).
    std::size_t size() const noexcept { return core()->size(); }
    bool empty() const noexcept { return size() == 0; }
    /// The bound given to `bounded(capacity)`.
    std::size_t capacity() const noexcept requires bounded { return core()->capacity(); }

  private:
    friend struct core_access;

    const basic_sender* check() const noexcept {
        COCHAN_CHECK(this->core_ != nullptr, "use of a moved-from cochan sender");
        return this;
    }
    Core* core() const noexcept { return check()->core_; }

    send_awaitable<Core> make_send(value_type&& v, std::stop_token token) const {
        return send_awaitable<Core>(core(), this->closed_, std::move(v), std::move(token));
    }

    send_result<value_type> blocking(value_type&& v, std::stop_token token) const {
        return run_blocking([&](resume_signal resume) {
            return send_awaitable<Core, resume_signal>(core(), this->closed_, std::move(v),
                                                       std::move(token), resume);
        });
    }

    send_result<value_type> send_now(value_type& v) const {
        Core* core = this->core();
        using status = typename Core::send_status;
        const status s = this->closed_ ? status::disconnected : core->try_send(v);
        // Nothing below may touch *this or the queue: try_send resumed any waiter it woke, and
        // that coroutine may have destroyed this endpoint.
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
template <class Core> class basic_receiver {
  public:
    using value_type = typename Core::value_type;

    basic_receiver(adopt_t, Core* core) noexcept : core_(core) {}
    basic_receiver(const basic_receiver& other) noexcept : core_(other.core()) {
        core_->retain();
        core_->add_receiver();
    }
    basic_receiver(basic_receiver&& other) noexcept : core_(std::exchange(other.core_, nullptr)) {}
    basic_receiver& operator=(const basic_receiver& other) noexcept {
        if (this != &other) *this = basic_receiver(other);
        return *this;
    }
    basic_receiver& operator=(basic_receiver&& other) noexcept {
        if (this != &other) {
            reset();
            core_ = std::exchange(other.core_, nullptr);
        }
        return *this;
    }
    ~basic_receiver() { reset(); }

    /// `co_await rx.recv()`: the oldest buffered value, else waits for one. Waiting receivers
    /// are served in FIFO order: a value is granted to the oldest directly and no later
    /// `try_recv` can take it. Returns `disconnected` once every sender is gone and the buffer
    /// is drained. Exception safety: if moving the value throws, the exception propagates from
    /// the `co_await` and the value goes back to the head of the channel (when there is room).
    recv_awaitable<Core> recv() const { return recv_awaitable<Core>(core(), {}); }

    /// As `recv()`, and a stop request on `token` while waiting completes it with `cancelled`,
    /// unless it was already granted a value (then it completes with the value). A token
    /// already stopped when the receive starts cancels it without touching the channel. On
    /// cancellation the coroutine resumes on the thread that called `request_stop()`.
    recv_awaitable<Core> recv(std::stop_token token) const {
        return recv_awaitable<Core>(core(), std::move(token));
    }

    /// `blocking_recv()`: as `co_await recv()` (optionally with a stop token), but blocks the
    /// calling thread while nothing is buffered. Threads and coroutines may wait on the same
    /// channel at once and are served in one FIFO; a blocked thread is woken by exactly the
    /// transition that completes its receive (no polling).
    recv_result<value_type> blocking_recv(std::stop_token token = {}) const {
        return run_blocking([&](resume_signal resume) {
            return recv_awaitable<Core, resume_signal>(core(), std::move(token), resume);
        });
    }

    /// The oldest buffered value without waiting, or `empty` (a sender remains) or
    /// `disconnected` (none remains and the buffer is drained). Never takes a value granted to
    /// a waiting receiver. Exception safety: strong.
    recv_result<value_type> try_recv() const { return core()->try_recv(); }

    /// True once every sender is gone (buffered values may remain: see `empty()`).
    bool is_closed() const noexcept { return core()->senders_gone(); }
    /// Values buffered now (a snapshot; values granted to waiting receivers are not counted).
    std::size_t size() const noexcept { return core()->size(); }
    bool empty() const noexcept { return size() == 0; }
    /// The bound given to `bounded(capacity)`.
    std::size_t capacity() const noexcept requires Core::bounded { return core()->capacity(); }

  private:
    friend struct core_access;

    Core* core() const noexcept {
        COCHAN_CHECK(core_ != nullptr, "use of a moved-from cochan receiver");
        return core_;
    }

    void reset() noexcept {
        if (core_ != nullptr) {
            Core* core = std::exchange(core_, nullptr);
            core->remove_receiver();
            core->release();
        }
    }

    Core* core_ = nullptr; // null once moved from
};

} // namespace cochan::detail
