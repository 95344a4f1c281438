// cochan: the optional Asio adapter (standalone Asio 1.22 or later). Include it after Asio is
// available; the rest of cochan does not need it.
//
// `asio::awaitable` cannot co_await foreign awaiters (asio#795), so channel operations are
// offered as Asio asynchronous operations taking any completion token:
//
//     auto r = co_await cochan::asio::async_recv(rx, asio::use_awaitable);       // recv_result<T>
//     auto s = co_await cochan::asio::async_send(tx, job, asio::use_awaitable);  // send_result<T>
//
// and `co_await rx.recv().resume_on(executor)` accepts an Asio executor.
#pragma once

#include <cochan/cochan.hpp>

#include <asio/associated_allocator.hpp>
#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/cancellation_type.hpp>
#include <asio/execution/executor.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/is_executor.hpp>
#include <asio/post.hpp>
#include <asio/system_executor.hpp>

#include <atomic>
#include <coroutine>
#include <exception>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

/// `resume_on(executor)`: a coroutine woken by the channel is resumed by `asio::post(executor)`.
/// While the coroutine waits, the poster holds a work guard, so `io_context::run()` does not
/// return under a coroutine that is still to be resumed there.
template <class Executor>
requires(::asio::execution::is_executor<Executor>::value ||
         ::asio::is_executor<Executor>::value) struct cochan::poster_traits<Executor> {
    static auto make(Executor ex) {
        return [work = ::asio::executor_work_guard<Executor>(ex)](std::coroutine_handle<> h) {
            ::asio::post(work.get_executor(), [h] { h.resume(); });
        };
    }
};

namespace cochan::asio {
namespace detail {

using cochan::detail::outcome;
using cochan::detail::wait_state;

/// Allocates an operation with the handler's associated allocator and frees it before the
/// handler is invoked (Asio's rule, so the handler may reuse the memory).
template <class Op, class Handler> struct op_memory {
    using allocator = typename std::allocator_traits<
        ::asio::associated_allocator_t<Handler>>::template rebind_alloc<Op>;

    template <class... Args> static Op* create(Handler& h, Args&&... args) {
        allocator alloc(::asio::get_associated_allocator(h));
        Op* p = std::allocator_traits<allocator>::allocate(alloc, 1);
        try {
            return ::new (static_cast<void*>(p)) Op(std::forward<Args>(args)...);
        } catch (...) {
            std::allocator_traits<allocator>::deallocate(alloc, p, 1);
            throw;
        }
    }
    static void destroy(Op* op) noexcept {
        allocator alloc(::asio::get_associated_allocator(op->handler_));
        destroy(op, alloc);
    }
    static void destroy(Op* op, allocator alloc) noexcept {
        op->~Op();
        std::allocator_traits<allocator>::deallocate(alloc, op, 1);
    }

    /// Frees the operation, then invokes its handler with `args` (moved out first).
    template <class... Args> static void finish(Op* op, Args&&... args) {
        allocator alloc(::asio::get_associated_allocator(op->handler_));
        Handler h(std::move(op->handler_));
        destroy(op, alloc);
        std::move(h)(std::forward<Args>(args)...);
    }
};

/// The parts every operation shares: the handler, the work it keeps on the handler's
/// executor, cancellation through the handler's slot, and completion by post.
///
/// Life: created at initiation; the channel completes the waiter (any thread, after its lock
/// is released), which posts `complete()` to the handler's associated executor; `complete()`
/// clears the slot, builds the result, frees the operation and calls the handler. A
/// cancellation signal (delivered in the handler's execution context, as Asio requires) either
/// unlinks a waiting operation (it then completes `cancelled`) or, for a receive that was
/// already granted but has not been delivered, marks it so `complete()` hands the value back
/// to the channel and reports `cancelled`: a lost race (`recv || timer`) loses no value.
template <class Derived, class Handler> class op_base {
  public:
    using executor_type = ::asio::associated_executor_t<Handler, ::asio::system_executor>;

    explicit op_base(Handler&& h)
        : handler_(std::move(h)),
          work_(::asio::get_associated_executor(handler_, ::asio::system_executor())) {}

    Handler handler_;

  protected:
    /// Installs the cancellation handler (when the handler has a connected slot).
    void connect_cancellation() {
        auto slot = ::asio::get_associated_cancellation_slot(handler_);
        if (slot.is_connected()) {
            slot.template emplace<canceller>(static_cast<Derived*>(this));
        }
    }

    /// Called after the channel released its lock: hop to the handler's executor.
    void post_completion() noexcept {
        auto ex = work_.get_executor();
        auto* self = static_cast<Derived*>(this);
        ::asio::post(ex, [self] { self->complete(); });
    }

    void disconnect_cancellation() noexcept {
        auto slot = ::asio::get_associated_cancellation_slot(handler_);
        if (slot.is_connected()) slot.clear();
    }

    std::atomic<bool> cancel_requested_{false}; // set by the canceller; read by complete()

  private:
    struct canceller {
        explicit canceller(Derived* s) noexcept : self(s) {} // no paren-aggregate-init in clang 14
        Derived* self;
        void operator()(::asio::cancellation_type_t type) const {
            if (type == ::asio::cancellation_type::none) return;
            // release: complete() (possibly on another thread of the same executor) acquires.
            self->cancel_requested_.store(true, std::memory_order_release);
            self->cancel(); // unlinks a still-waiting operation; a no-op once it is done
        }
    };

    ::asio::executor_work_guard<executor_type> work_;
};

template <class Core, class Handler>
class recv_op final : public cochan::detail::recv_waiter<typename Core::value_type>,
                      public op_base<recv_op<Core, Handler>, Handler> {
    using T = typename Core::value_type;
    using base = op_base<recv_op, Handler>;
    using memory = op_memory<recv_op, Handler>;
    friend base;
    friend memory;

  public:
    recv_op(Core* core, Handler&& h) : base(std::move(h)), core_(core) {}

    static void start(Core* core, Handler&& h) {
        recv_op* op = memory::create(h, core, std::move(h));
        core->retain(); // the queue outlives the operation even if `rx` does not
        op->notify_ = &notify;
        op->connect_cancellation();
        bool linked;
        try {
            // reserve: a value taken now keeps its slot until complete() runs, so a cancellation
            // arriving before then can always hand it back.
            linked = core->recv_or_wait(*op, /*reserve=*/true);
        } catch (...) {
            op->disconnect_cancellation();
            memory::destroy(op);
            core->release();
            throw;
        }
        if (!linked) op->post_completion(); // never complete inside the initiating function
    }

  private:
    static void notify(cochan::detail::waiter_base* w) noexcept {
        static_cast<recv_op*>(static_cast<cochan::detail::recv_waiter<T>*>(w))->post_completion();
    }

    void cancel() noexcept { core_->cancel_recv(*this); }

    void complete() {
        this->disconnect_cancellation();
        const bool has_value = this->outcome_ == outcome::ok || this->outcome_ == outcome::granted;
        if (has_value && this->cancel_requested_.load(std::memory_order_acquire)) {
            // Cancelled after the grant but before delivery: give the value back (to the next
            // waiting receiver or the head of the buffer) and report cancelled.
            core_->hand_back(this->slot_, this->outcome_ == outcome::granted);
            finish(recv_result<T>(std::in_place_index<1>, recv_errc::cancelled));
            return;
        }
        switch (this->outcome_) {
        case outcome::ok:
        case outcome::granted: {
            std::optional<recv_result<T>> r;
            try {
                r.emplace(std::in_place, std::move(*this->slot_));
            } catch (...) { // T's move threw: the value goes back, the exception propagates
                Core* core = core_;
                core->hand_back(this->slot_, this->outcome_ == outcome::granted);
                memory::destroy(this);
                core->release();
                throw;
            }
            this->slot_.reset();
            if constexpr (Core::bounded) {
                if (this->outcome_ == outcome::granted) core_->release_grant();
            }
            finish(std::move(*r));
            return;
        }
        case outcome::disconnected:
            finish(recv_result<T>(std::in_place_index<1>, recv_errc::disconnected));
            return;
        default: finish(recv_result<T>(std::in_place_index<1>, recv_errc::cancelled)); return;
        }
    }

    void finish(recv_result<T>&& r) {
        Core* core = core_;
        memory::finish(this, std::move(r));
        core->release();
    }

    Core* core_;
};

template <class Core, class Handler>
class send_op final : public cochan::detail::send_waiter<typename Core::value_type>,
                      public op_base<send_op<Core, Handler>, Handler> {
    using T = typename Core::value_type;
    using base = op_base<send_op, Handler>;
    using memory = op_memory<send_op, Handler>;
    friend base;
    friend memory;

  public:
    template <class V>
    send_op(Core* core, V&& value, Handler&& h)
        : base(std::move(h)), core_(core), value_(std::forward<V>(value)) {}

    template <class V> static void start(Core* core, bool closed, V&& value, Handler&& h) {
        send_op* op = memory::create(h, core, std::forward<V>(value), std::move(h));
        core->retain(); // the queue outlives the operation even if `tx` does not
        op->notify_ = &notify;
        op->offered_ = std::addressof(op->value_);
        if (closed) {
            op->outcome_ = outcome::disconnected;
            op->post_completion();
            return;
        }
        op->connect_cancellation();
        bool linked;
        try {
            linked = core->send_or_wait(*op);
        } catch (...) {
            op->disconnect_cancellation();
            memory::destroy(op);
            core->release();
            throw;
        }
        if (!linked) op->post_completion();
    }

  private:
    static void notify(cochan::detail::waiter_base* w) noexcept {
        static_cast<send_op*>(static_cast<cochan::detail::send_waiter<T>*>(w))->post_completion();
    }

    void cancel() noexcept { core_->cancel_send(*this); }

    void complete() {
        this->disconnect_cancellation();
        if (this->holds_producer_) core_->leave_producer();
        switch (this->outcome_) {
        case outcome::ok: finish(send_result<T>(std::in_place)); return;
        case outcome::failed: {
            auto error = this->error_;
            finish_with_exception(std::move(error));
            return;
        }
        case outcome::cancelled:
            finish(send_result<T>(std::in_place_index<1>,
                                  send_error<T>{send_errc::cancelled, std::move(value_)}));
            return;
        default:
            finish(send_result<T>(std::in_place_index<1>,
                                  send_error<T>{send_errc::disconnected, std::move(value_)}));
            return;
        }
    }

    void finish(send_result<T>&& r) {
        Core* core = core_;
        memory::finish(this, std::move(r));
        core->release();
    }

    [[noreturn]] void finish_with_exception(std::exception_ptr e) {
        Core* core = core_;
        memory::destroy(this);
        core->release();
        std::rethrow_exception(
            std::move(e)); // propagates out of the executor's run(), as Asio does
    }

    Core* core_;
    T value_; // moved into the channel by the granter; handed back on failure
};

struct initiate_recv {
    template <class Handler, class Core> void operator()(Handler&& h, Core* core) const {
        using handler_t = std::decay_t<Handler>;
        handler_t handler(std::forward<Handler>(h));
        recv_op<Core, handler_t>::start(core, std::move(handler));
    }
};

struct initiate_send {
    template <class Handler, class Core, class V>
    void operator()(Handler&& h, Core* core, bool closed, V&& value) const {
        using handler_t = std::decay_t<Handler>;
        handler_t handler(std::forward<Handler>(h));
        // Forwarded: a one-shot launch passes the value as an rvalue (moved into the
        // operation); a deferred operation launched as an lvalue passes its stored value as a
        // const lvalue (copied, so launching it again sends the value again).
        send_op<Core, handler_t>::start(core, closed, std::forward<V>(value), std::move(handler));
    }
};

} // namespace detail

/// Receives from `rx` as an Asio asynchronous operation. Completion signature
/// `void(cochan::recv_result<T>)`. The handler is always invoked through its associated
/// executor (`asio::system_executor` if it has none) by `asio::post`, never inside the
/// initiating function or the channel's lock; while the operation waits it keeps work on that
/// executor. Memory comes from the handler's associated allocator.
///
/// Cancellation (the handler's cancellation slot; terminal, partial and total alike): a
/// waiting operation completes with `recv_errc::cancelled`. An operation already granted a
/// value whose handler has not run yet also completes with `cancelled`, and the value goes
/// back to the channel (to the next waiting receiver, else the head of the buffer), so a
/// `recv || timer` race loses nothing. That guarantee needs the cancellation signal and the
/// completion to be serialized, as Asio requires of cancellation slots: a single-threaded
/// `io_context`, or a strand.
///
/// Thread safety: as `rx.recv()`. The operation keeps the channel alive; if the last receiver
/// is dropped while it waits, it completes with `disconnected`.
template <class Receiver, class CompletionToken>
auto async_recv(const Receiver& rx, CompletionToken&& token) {
    using T = typename Receiver::value_type;
    auto* core = cochan::detail::core_access::core(rx);
    return ::asio::async_initiate<CompletionToken, void(recv_result<T>)>(detail::initiate_recv{},
                                                                         token, core);
}

/// Sends `value` through a bounded sender as an Asio asynchronous operation. Completion
/// signature `void(cochan::send_result<T>)`; the value comes back in the error on
/// `disconnected` or `cancelled`. Executor, allocator and work: as `async_recv`. Cancellation:
/// a waiting send completes with `send_errc::cancelled` and its value; a send already granted
/// a slot completes normally (its value is in the channel and cannot be taken back). If `T`'s
/// move throws while a slot is granted later, the exception is rethrown from the handler's
/// executor (its `run()`), not delivered to the handler.
///
/// Thread safety: as `tx.send(v)`; an SPMC sender must not have two sends in flight. The
/// operation keeps the channel alive.
template <class Sender, class CompletionToken>
requires requires(Sender& tx, typename Sender::value_type v) {
    tx.try_send(std::move(v));
}
auto async_send(Sender& tx, typename Sender::value_type value, CompletionToken&& token) {
    using T = typename Sender::value_type;
    auto* core = cochan::detail::core_access::core(tx);
    const bool closed = cochan::detail::core_access::closed(tx);
    return ::asio::async_initiate<CompletionToken, void(send_result<T>)>(
        detail::initiate_send{}, token, core, closed, std::move(value));
}

} // namespace cochan::asio
