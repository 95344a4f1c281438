// cochan: the operation-state protocol. One receive or one send against a channel's queue,
// embedded by everything that waits: the coroutine awaitables (built in await_suspend, once
// their first step found nothing), the blocking calls, the Asio operations. It owns the waiter
// node, linking, stop-token cancellation, the grant, the give-back of an undelivered value and the
// queue references; its owner only says how to be woken and what to do with the result.
#pragma once

#include <cochan/detail/after_move.hpp>
#include <cochan/detail/competing_queue.hpp>
#include <cochan/detail/config.hpp>
#include <cochan/detail/select_claim.hpp>
#include <cochan/detail/trampoline.hpp>
#include <cochan/detail/waiter.hpp>
#include <cochan/result.hpp>
#include <cochan/stop_token.hpp>

#include <coroutine>
#include <exception>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace cochan::detail {

/// A counted reference to a queue (one `retain()`), for whatever must keep a channel alive
/// without being an endpoint: an Asio operation and a lazy token's stored arguments, the test
/// harnesses. Copy retains again; a moved-from one holds nothing. Thread safety: distinct
/// objects: safe.
template <class Queue> class queue_ref {
  public:
    queue_ref() noexcept = default;
    explicit queue_ref(Queue* q) noexcept : q_(q) {
        if (q_ != nullptr) q_->retain();
    }
    queue_ref(const queue_ref& other) noexcept : queue_ref(other.q_) {}
    queue_ref(queue_ref&& other) noexcept : q_(std::exchange(other.q_, nullptr)) {}
    queue_ref& operator=(queue_ref other) noexcept {
        std::swap(q_, other.q_);
        return *this;
    }
    ~queue_ref() {
        if (q_ != nullptr) q_->release(); // may delete the queue and its buffered values
    }

    Queue* get() const noexcept { return q_; }
    Queue* operator->() const noexcept { return q_; }

  private:
    Queue* q_ = nullptr;
};

/// Where an operation starts from: the endpoint's queue, counted, and (for a sender) whether
/// that endpoint was closed. Endpoints hand it out through `make_op_source(endpoint)`.
template <class Queue> struct op_source {
    queue_ref<Queue> queue;
    bool closed = false;
};

// The life of an operation state (recv_op_state, send_op_state). Every step is its owner's,
// on one thread at a time, except where a waiter field says "under the lock".
//
//   fresh     constructed on a queue that some endpoint (or queue_ref) keeps alive.
//   start()   registers the stop callback, then asks the queue under its lock:
//             - completes at once (returns false): done. No notification will come.
//             - links the waiter (returns true): linked. From here until its notify function
//               runs, the owner must not touch the state: the completer may be notifying it on
//               another thread.
//   linked    a grant, a disconnection, a stop request or cancel() completes it under the
//             lock; the completer calls the notify function once, after unlocking: done.
//   done      the owner calls one of
//             - result(): the value or the error; the permit and the waiter's reference are
//               released (finished). If `T`'s move throws, the value stays (still done) and
//               the exception propagates;
//             - give_back() (receive): its value is not delivered (the delivery was
//               cancelled, as Asio's lossless `||` does): back to the queue (finished);
//             - or it destroys the state (below).
//   destroyed from any state but linked-and-racing (the owner's coroutine destroyed while it
//             waits, before it resumed, or an Asio operation abandoned at shutdown): a linked
//             waiter is unlinked, a completed one queued on this thread's trampoline is
//             withdrawn, a value it holds goes back to the queue, references are dropped.
//             Destroying it while another thread may be completing it is the one thing not
//             allowed (docs/design.md, known limits).
//   finished  nothing is left to undo; the queue may already be gone.
//
// The queue reference of an operation (`keeps_queue_`, taken by keep_queue()). Whoever calls
// an operation keeps the queue alive until the call returns (an endpoint, whose member made
// it; an Asio operation, which holds its own reference). Past that, the state must hold one
// whenever it may still touch the queue after every endpoint could be gone:
// - its resumption is deferred: queued on a trampoline that another call drains, posted to
//   an executor. The notify function takes the reference before it defers (the completer's
//   own call keeps the queue alive until then). A resumption run at once, inside the
//   completer's call, needs none: result() has touched the queue for the last time before any
//   user code runs.
// - it has a stop callback, which may fire at any time until result() unregisters it: taken
//   in start(), before registering it.
// So a hand-off resumed inline costs no atomic operation for the reference.
//
// Cancellation, stop token and cancel() alike: `queue->cancel_*` under the lock decides it. A
// stop before linking only marks `stop_seen_` (the operation then completes `cancelled` when it
// links, without waiting); while linked it unlinks and completes `cancelled`; once done it does
// nothing (a grant made first wins: docs/contract.md, rule 8).

/// Takes an operation state's queue reference, at most once (see the protocol above).
template <class Queue> void keep_queue(Queue* q, waiter_base& w) noexcept {
    if (!w.keeps_queue_) {
        w.keeps_queue_ = true;
        q->retain();
    }
}
/// Drops it, if taken: the queue may be freed here, so nothing may touch it afterwards.
template <class Queue> void drop_queue(Queue* q, waiter_base& w) noexcept {
    if (w.keeps_queue_) {
        w.keeps_queue_ = false;
        q->release();
    }
}

/// One receive. `Queue` is a `competing_queue`; `Token` is the stop token start() takes.
template <class Queue, class Token = default_stop_token>
class recv_op_state : public recv_waiter<typename Queue::value_type> {
    using T = typename Queue::value_type;

  public:
    explicit recv_op_state(Queue* q) noexcept : queue_(q) {}
    recv_op_state(const recv_op_state&) = delete;
    recv_op_state& operator=(const recv_op_state&) = delete;
    ~recv_op_state() { abandon(); }

    /// The state a waiter node belongs to, for the owner's notify function.
    static recv_op_state& of(waiter_base* w) noexcept {
        return *static_cast<recv_op_state*>(static_cast<recv_waiter<T>*>(w));
    }

    Queue* queue() const noexcept { return queue_; }

    /// Before start(): the completion is delivered later and may still be cancelled after the
    /// operation is done, so a value taken at once keeps its permit until result() or
    /// give_back(), as a grant does (then giving it back always finds room).
    void defer_delivery() noexcept { this->deferred_delivery_ = true; }

    /// Before start(): this receive is branch `branch` of a select (detail/select_claim.hpp); it
    /// takes or is granted a value only by winning `claim`.
    void join_select(select_claim& claim, int branch) noexcept {
        this->claim_ = &claim;
        this->branch_ = branch;
    }

    /// Starts the receive: true if it waits (linked), false if it completed at once. `notify`
    /// is called once after it completes while linked; `h` is stored for it (`handle_`).
    bool start(waiter_base::notify_fn notify, std::coroutine_handle<> h, const Token& token = {}) {
        started_ = true;
        this->handle_ = h;
        this->notify_ = notify;
        if (token.stop_possible()) {
            keep_queue(); // the callback may fire after every endpoint is gone
            // Registered before linking: a stop that fires now only marks stop_seen_, so the
            // owner is never notified from inside this function.
            stop_cb_.emplace(token, canceller{this});
        }
        // A stop request from another thread can land here, before the waiter is linked.
        COCHAN_DETAIL_INTERLEAVE(recv_before_link);
        // true: linked. Another thread may notify (and the owner destroy) this state at once,
        // so nothing below this line may touch *this.
        return queue_->recv_or_wait(*this);
    }

    /// Cancels the operation (Asio's cancellation slot). Any thread; see the protocol above.
    void cancel() noexcept { queue_->cancel_recv(*this); }

    /// Takes the state's queue reference, if it has none (see the protocol above). Called by
    /// the owner, or by the notify function before it defers the resumption.
    void keep_queue() noexcept { detail::keep_queue(queue_, *this); }

    /// Done with a value (received, or taken at once), not yet delivered.
    bool holds_value() const noexcept { return this->value_.has_value(); }

    /// The outcome, as an `R` (a `recv_result`): a value is moved once, straight into
    /// `R(std::in_place, prefix..., T&&)` (a select passes `std::in_place_index<I>` to build its
    /// variant). Exception safety: if `T`'s move throws, the value stays in the state (its
    /// destruction gives it back) and the exception propagates.
    template <class R = recv_result<T>, class... Prefix> R result(Prefix... prefix) {
        stop_cb_.reset(); // waits for a stop callback still running on another thread
        switch (this->outcome_) {
        case outcome::ok:
        case outcome::granted: {
            auto done = on_moved<T>([this]() noexcept {
                this->value_.reset();
                if constexpr (Queue::bounded) {
                    if (this->outcome_ == outcome::granted) queue_->release_permit();
                }
                settle();
            });
            return R(std::in_place, prefix..., std::move(*this->value_));
        }
        case outcome::disconnected:
            settle();
            return R(std::in_place_index<1>, recv_errc::disconnected);
        default: settle(); return R(std::in_place_index<1>, recv_errc::cancelled);
        }
    }

    /// As result(), but a value is appended to `out` (`push_back(T&&)`) instead of returned;
    /// without a value, the error. Exception safety: if `push_back` throws, the value stays in
    /// the state (its destruction gives it back) and the exception propagates.
    template <class Out> std::optional<recv_errc> result_into(Out& out) {
        stop_cb_.reset();
        if (this->outcome_ != outcome::ok && this->outcome_ != outcome::granted) {
            settle();
            return this->outcome_ == outcome::disconnected ? recv_errc::disconnected
                                                           : recv_errc::cancelled;
        }
        out.push_back(std::move(*this->value_));
        this->value_.reset();
        if constexpr (Queue::bounded) {
            if (this->outcome_ == outcome::granted) queue_->release_permit();
        }
        settle();
        return std::nullopt;
    }

    /// Done and holding a value that will not be delivered: it goes back to the queue (the
    /// next waiting receiver, else the head of the buffer). Otherwise like result() without
    /// one.
    void give_back() noexcept {
        stop_cb_.reset();
        if (this->value_.has_value()) queue_->give_back(*this);
        settle();
    }

    /// What destruction does; callable earlier by an owner that must let go at a given moment
    /// (an Asio operation abandoned at shutdown). Idempotent.
    void abandon() noexcept {
        if (finished_) return;
        if (!started_) { // never started (a resume_on() source, an awaitable never awaited)
            finished_ = true;
            return;
        }
        stop_cb_.reset();
        queue_->unlink_recv(*this); // still waiting: unlinked (outcome cancelled)
        trampoline::withdraw(this); // completed and queued on this thread's trampoline
        give_back();
    }

  private:
    struct canceller {
        recv_op_state* self;
        void operator()() const noexcept { self->cancel(); }
    };

    /// Finished: drops the state's queue reference, if it holds one (the queue may be freed
    /// here if every endpoint is gone, so nothing may touch it afterwards).
    void settle() noexcept {
        finished_ = true;
        drop_queue(queue_, *this);
    }

    Queue* queue_; // kept alive by the caller's endpoint or queue_ref, and by the state's own
                   // reference when it holds one (keep_queue())
    std::optional<stop_callback_for_t<Token, canceller>> stop_cb_;
    bool started_ = false;  // owner only: start() was called
    bool finished_ = false; // owner only: nothing left to undo
};

/// Tag of send_op_state's constructor whose value stays in the caller's storage.
struct borrowed_value_t {};

/// One send, holding its value until the queue takes it (or until it is handed back to the
/// caller in the error). `Queue` is a bounded `competing_queue`. With `Borrowed`, the value
/// lives in the owner's storage (the send awaitable's), which outlives the state; otherwise in
/// the state. `Token` as for recv_op_state.
template <class Queue, bool Borrowed = false, class Token = default_stop_token>
class send_op_state : public send_waiter<typename Queue::value_type> {
    using T = typename Queue::value_type;

  public:
    /// `closed`: the sender endpoint was closed when the send was made (it fails
    /// `disconnected` without touching the queue).
    template <class V>
    send_op_state(Queue* q, bool closed, V&& value) requires(!Borrowed)
        : queue_(q), value_(std::in_place, std::forward<V>(value)), closed_(closed) {}
    send_op_state(borrowed_value_t, Queue* q, bool closed, T& value) noexcept requires Borrowed
        : queue_(q),
          value_(std::addressof(value)),
          closed_(closed) {}
    send_op_state(const send_op_state&) = delete;
    send_op_state& operator=(const send_op_state&) = delete;
    ~send_op_state() { abandon(); }

    static send_op_state& of(waiter_base* w) noexcept {
        return *static_cast<send_op_state*>(static_cast<send_waiter<T>*>(w));
    }

    Queue* queue() const noexcept { return queue_; }
    bool closed() const noexcept { return closed_; }
    /// The value, before start() (to build another state from it).
    T& value() noexcept { return *value_; }

    /// Starts the send: true if it waits (linked), false if it completed at once.
    bool start(waiter_base::notify_fn notify, std::coroutine_handle<> h, const Token& token = {}) {
        started_ = true;
        if (closed_) {
            this->outcome_ = outcome::disconnected;
            return false;
        }
        this->handle_ = h;
        this->notify_ = notify;
        this->offered_ = std::addressof(*value_);
        if (token.stop_possible()) {
            keep_queue(); // as recv_op_state::start
            stop_cb_.emplace(token, canceller{this});
        }
        COCHAN_DETAIL_INTERLEAVE(send_before_link); // as recv_before_link
        // true: linked; nothing below may touch *this (see recv_op_state::start).
        return queue_->send_or_wait(*this);
    }

    void cancel() noexcept { queue_->cancel_send(*this); }

    /// As recv_op_state::keep_queue().
    void keep_queue() noexcept { detail::keep_queue(queue_, *this); }

    /// The outcome: success, or the error with the value back. A move of `T` that threw when
    /// the queue admitted the send later is rethrown here.
    send_result<T> result() {
        stop_cb_.reset();
        settle(); // the rest reads only this state
        switch (this->outcome_) {
        case outcome::ok: return send_result<T>(std::in_place);
        case outcome::failed: std::rethrow_exception(this->error_);
        case outcome::cancelled:
            return send_result<T>(std::in_place_index<1>,
                                  send_error<T>{send_errc::cancelled, std::move(*value_)});
        default:
            return send_result<T>(std::in_place_index<1>,
                                  send_error<T>{send_errc::disconnected, std::move(*value_)});
        }
    }

    /// As recv_op_state::abandon(). The unsent value stays until the state is destroyed.
    void abandon() noexcept {
        if (finished_) return;
        if (!started_) {
            finished_ = true;
            return;
        }
        stop_cb_.reset();
        queue_->unlink_send(*this);
        trampoline::withdraw(this);
        settle();
    }

    /// abandon(), and the unsent value (or the moved-from one a granted send left) is
    /// destroyed now (an Asio operation abandoned at shutdown: the value may be an I/O object
    /// that must go while its context exists).
    void discard() noexcept requires(!Borrowed) {
        abandon();
        value_.reset();
        this->error_ = nullptr;
    }

  private:
    struct canceller {
        send_op_state* self;
        void operator()() const noexcept { self->cancel(); }
    };

    void settle() noexcept {
        finished_ = true;
        if (this->holds_producer_) {
            this->holds_producer_ = false;
            queue_->leave_producer();
        }
        drop_queue(queue_, *this);
    }

    Queue* queue_; // as recv_op_state::queue_
    // The value, moved into the channel by whoever grants the permit: the state's own (engaged
    // until discard()), or the owner's.
    std::conditional_t<Borrowed, T*, std::optional<T>> value_;
    std::optional<stop_callback_for_t<Token, canceller>> stop_cb_;
    bool closed_;
    bool started_ = false;  // owner only
    bool finished_ = false; // owner only
};

} // namespace cochan::detail
