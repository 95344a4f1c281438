// cochan: the Asio adapter's one implementation, shared by both Asio flavours. Not a public
// header and deliberately without an include guard: <cochan/asio.hpp> (standalone Asio) and
// <cochan/boost_asio.hpp> (Boost.Asio) each include it once, after their library's headers,
// with two macros naming the flavour:
//
//   COCHAN_ASIO_ADAPTER   the adapter's namespace under cochan: `asio` or `boost_asio`
//   COCHAN_ASIO_LIBRARY   the Asio namespace: `::asio` or `::boost::asio`
//   COCHAN_ASIO_AWAITABLE 1 if that library has coroutines (`use_awaitable`), else 0
//
// and with `cochan::COCHAN_ASIO_ADAPTER::error_code` declared (`std::error_code` or
// `boost::system::error_code`). So both adapters compile alone and together in one
// translation unit, and a fix here reaches both. Inside, the Asio namespace is spelled
// `net::` (a namespace alias in the adapter's detail namespace).
#if !defined(COCHAN_ASIO_ADAPTER) || !defined(COCHAN_ASIO_LIBRARY) ||                              \
    !defined(COCHAN_ASIO_AWAITABLE)
#error "include <cochan/asio.hpp> or <cochan/boost_asio.hpp>, not cochan/detail/asio_adapter.hpp"
#endif

#include <cochan/cochan.hpp>

#include <atomic>
#include <concepts>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

namespace cochan::COCHAN_ASIO_ADAPTER::detail {
namespace net = COCHAN_ASIO_LIBRARY;

/// An Asio executor, standard (`execution::is_executor`) or of the older Networking TS kind.
template <class E>
concept executor = net::execution::is_executor<E>::value || net::is_executor<E>::value;
} // namespace cochan::COCHAN_ASIO_ADAPTER::detail

/// `resume_on(executor)`: a coroutine woken by the channel is resumed through
/// `defer(executor)`, inside a `cochan::resumption_scope`. `defer` marks it a continuation of
/// the waking thread's work: an `io_context` keeps it in that thread's private queue (no lock,
/// no wake-up of another thread) when the waker runs on the `io_context` itself, and queues it
/// like `post` otherwise. The scope lets the resumed coroutine run on until it suspends before
/// the coroutines it wakes in turn run. While the coroutine waits, the poster holds a work
/// guard, so `io_context::run()` does not return under a coroutine that is still to be resumed
/// there. The coroutine frame is the caller's, not the adapter's: the executor's execution
/// context must outlive the wait.
template <cochan::COCHAN_ASIO_ADAPTER::detail::executor Executor>
struct cochan::poster_traits<Executor> {
    static auto make(Executor ex) {
        namespace net = ::cochan::COCHAN_ASIO_ADAPTER::detail::net;
        return [work = net::executor_work_guard<Executor>(ex)](std::coroutine_handle<> h) {
            net::defer(work.get_executor(), [h] { cochan::resume_in_scope(h); });
        };
    }
};

namespace cochan::COCHAN_ASIO_ADAPTER {
namespace detail {

using cochan::detail::op_source;
using cochan::detail::outcome;
using cochan::detail::queue_ref;
using cochan::detail::wait_state;

/// How an operation hands its outcome to the handler: as a cochan result (`async_recv`,
/// `async_send`) or by Asio's error_code convention (`async_recv_ec`, `async_send_ec`). The
/// operations are the same; only this last step differs.
enum class convention { result, error_code };

/// Calls a receive's handler with `r`: `h(r)`, or `h(ec, value)` (a value-initialized `T`
/// beside an error).
template <convention C, class Handler, class T>
void invoke_handler(Handler&& h, recv_result<T>&& r) {
    if constexpr (C == convention::result) {
        std::forward<Handler>(h)(std::move(r));
    } else if (r) {
        std::forward<Handler>(h)(error_code(), std::move(*r));
    } else {
        std::forward<Handler>(h)(error_code(r.error()), T());
    }
}

/// Calls a send's handler with `r`: `h(r)`, or `h(ec, unsent)` (`unsent` holds the value handed
/// back beside an error, and nothing on success).
template <convention C, class Handler, class T>
void invoke_handler(Handler&& h, send_result<T>&& r) {
    if constexpr (C == convention::result) {
        std::forward<Handler>(h)(std::move(r));
    } else if (r) {
        std::forward<Handler>(h)(error_code(), std::optional<T>());
    } else {
        send_error<T>& e = r.error();
        std::forward<Handler>(h)(error_code(e.reason), std::optional<T>(std::move(e.value)));
    }
}

// ---- the registry: operations that can still complete, per execution context ------------------
//
// Why: an operation owns its handler (for `use_awaitable`, a coroutine frame) and a work guard
// on the handler's executor. If the execution context (an `io_context`) is destroyed while an
// operation waits in a channel, nothing would ever destroy that handler (a leak: the frame and
// the endpoints it holds), and a later grant would post into the dead context
// (use-after-free), then destroy a work guard on a dead scheduler. So every operation that can
// still complete is enlisted in a registry owned by a service of that context, and the
// service's shutdown() abandons them. ~io_context shuts services down in reverse order of
// creation, so this service (created at the first operation) shuts down before the scheduler,
// which is created with the io_context: while shutdown() runs, posting and work guards are
// still valid.
//
// Life of an operation and its owner in each state (`op_base` and its two subclasses):
//
//   started    start() allocates it with the handler's allocator, retains the queue, and
//              enlists it in the registry of the handler executor's context. If that registry
//              is already shut down (a handler destroyed during ~io_context starts an
//              operation), it is abandoned at once. Owner: the initiating thread.
//   waiting    linked in the channel (recv_or_wait / send_or_wait returned true). Owner: the
//              channel. Whoever completes it under the channel's lock (a grant, a
//              disconnection, a cancellation) owns it from then until it has called `notify_`.
//   ready      done, not linked. post_completion() (from start(), or from `notify_`, called
//              exactly once per linked operation) asks the registry:
//              - not shut down: the operation is delisted, an in-flight post is counted, and a
//                `completion` function object owning the operation is posted to the handler's
//                executor (with the handler's allocator). State: posted.
//              - shut down: the operation was taken by shutdown() (below); hand over to it.
//   posted     owned by the `completion` object in the executor's queue. Invoked: complete()
//              builds the result, frees the operation, then calls the handler. Destroyed
//              without being invoked (the context is destroyed with it queued): the operation
//              is abandoned, as Asio's own operations are (the `destroy` action of
//              scheduler_operation).
//   freed      memory returned to the handler's allocator, the queue released.
//
// Abandoning an operation: clear its cancellation slot; a receive holding a value hands it
// back to the channel (to the next waiting receiver, else the head of the buffer), a send
// drops its unsent value; then the handler is destroyed, never invoked (this may run user
// code, such as a coroutine frame dropping endpoints: no lock is held); then the work guard;
// then the memory is freed and the queue released.
//
// registry shutdown(), on the thread destroying the context ("S"):
//   1. Under the registry mutex: mark it shut down and take every enlisted operation (state
//      taken). From then on no operation is enlisted and nothing posts to this context.
//   2. For each taken operation, with no lock held:
//      a. cancel it in the channel (cancel_recv / cancel_send). A waiting operation is
//         unlinked and marked cancelled, and its `notify_` runs at once on S (a notification
//         is what tells the two cases apart without a new queue entry point). One that is
//         already done was completed by another thread ("T"), whose `notify_` may still be
//         on its way.
//      b. abandon its context-bound parts: slot, hand-back, value, handler, work guard. Safe
//         even while T's `notify_` is pending: the operation is done, T's completion wrote
//         the outcome and the value before releasing the channel lock that step a took, and
//         from then on T only reads the registry pointer and the registry-guarded state.
//      c. under the registry mutex: if its notification came (state notified), S frees it;
//         otherwise mark it abandoned, and the late `notify_` frees it (memory, queue and
//         registry reference; nothing of the context). Exactly one of the two frees it.
//   3. Wait until no post is in flight, so the scheduler shuts down (and destroys the
//      posted completions) only after every thread that passed step 1's check is out of
//      asio::defer.
// Race (1), an operation completed by T whose `notify_` has not posted yet when S starts: T's
// post_completion checks the registry under its mutex. If it got there first, the operation
// is delisted and S waits for the post (step 3); otherwise S owns the context-bound parts
// and T only frees memory. The registry outlives the context while operations reference it
// (counted), so a late T can check it safely. Race (2), an operation started after shutdown:
// refused at enlistment, abandoned at once. Lock order: the registry mutex is never held
// while taking the channel lock, running user code or destroying handlers.

class op_registry;

/// The part of an operation the registry sees.
struct tracked_op {
    enum class track : unsigned char {
        none,      ///< not enlisted (posted, or the executor has no execution context)
        enlisted,  ///< in the registry's list: can still complete
        taken,     ///< taken by shutdown(), which has not finished with it
        notified,  ///< taken, and its notification came: shutdown() frees it
        abandoned, ///< taken, and shutdown() abandoned it first: the late notification frees it
    };
    /// shutdown() step 2 for this operation type.
    using shutdown_fn = void (*)(tracked_op*) noexcept;

    explicit tracked_op(shutdown_fn f) noexcept : shutdown_(f) {}

    const shutdown_fn shutdown_;      // immutable
    op_registry* registry_ = nullptr; // written at enlistment, before the operation is linked
                                      // (so its completer sees it); then read-only. Counted.
    tracked_op* reg_prev_ = nullptr;  // guarded by the registry's mutex
    tracked_op* reg_next_ = nullptr;  // guarded by the registry's mutex; read by shutdown()
                                      // after it took the list, when nobody writes it any more
    track track_ = track::none;       // guarded by the registry's mutex
};

/// The operations of one execution context that can still complete, and the shutdown
/// protocol described above. Heap-allocated and counted: the service holds one reference,
/// each enlisted operation one, so a notification arriving after the context is gone can
/// still consult it. Thread-safe.
class op_registry {
  public:
    enum class post_action {
        post,     ///< delisted: post the completion, then call end_post()
        handover, ///< shutdown() has it and will free it: do not touch the operation again
        free,     ///< shutdown() abandoned it already: free it, then release()
    };

    op_registry() = default;
    op_registry(const op_registry&) = delete;
    op_registry& operator=(const op_registry&) = delete;

    void retain() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
    void release() noexcept {
        // acq_rel: the deleting thread sees every other holder's last use.
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }

    /// Lists `op` (it takes a reference), or returns false once shut down.
    bool enlist(tracked_op& op) noexcept {
        std::lock_guard lock(mutex_);
        if (shut_down_) return false;
        op.registry_ = this;
        op.track_ = tracked_op::track::enlisted;
        op.reg_prev_ = nullptr;
        op.reg_next_ = head_;
        if (head_ != nullptr) head_->reg_prev_ = &op;
        head_ = &op;
        retain();
        return true;
    }

    /// start() failed after enlisting `op` (it never linked): take it out, drop its reference.
    void delist(tracked_op& op) noexcept {
        {
            std::lock_guard lock(mutex_);
            // Starting an operation while its context is destroyed on another thread is not
            // allowed (as for any Asio operation), so shutdown() cannot have taken it.
            COCHAN_ASSERT(op.track_ == tracked_op::track::enlisted,
                          "an Asio operation started while its execution context was destroyed");
            unlink(op);
        }
        release();
    }

    /// The operation is done and about to be posted: see post_action.
    post_action begin_post(tracked_op& op) noexcept {
        std::lock_guard lock(mutex_);
        if (!shut_down_) {
            unlink(op);
            ++posting_;
            return post_action::post;
        }
        // Shut down: shutdown() took every enlisted operation, this one included.
        if (op.track_ == tracked_op::track::abandoned) return post_action::free;
        op.track_ = tracked_op::track::notified;
        return post_action::handover;
    }

    /// The post counted by begin_post() returned; drops the operation's reference.
    void end_post() noexcept {
        {
            std::lock_guard lock(mutex_);
            // Notified under the mutex: shutdown() cannot return (and the service release its
            // reference) between the decrement and the notification.
            if (--posting_ == 0 && shut_down_) idle_.notify_all();
        }
        release();
    }

    /// shutdown() step 2c: true if the operation's notification came (the caller frees it);
    /// otherwise the late notification will.
    bool shutdown_finished(tracked_op& op) noexcept {
        std::lock_guard lock(mutex_);
        if (op.track_ == tracked_op::track::notified) return true;
        op.track_ = tracked_op::track::abandoned;
        return false;
    }

    /// Called by the service's shutdown(); see the protocol above.
    void shutdown() noexcept {
        tracked_op* ops = nullptr;
        {
            std::lock_guard lock(mutex_);
            shut_down_ = true;
            ops = std::exchange(head_, nullptr);
            for (tracked_op* op = ops; op != nullptr; op = op->reg_next_) {
                op->track_ = tracked_op::track::taken;
            }
        }
        // Newest first (enlist() pushes at the head): receives granted in FIFO order then hand
        // their values back to the head of a buffer oldest last, which keeps their order.
        // Nothing frees an operation of the list before its turn: a notification on the way
        // only marks it (begin_post), and nothing posts it any more.
        while (ops != nullptr) {
            tracked_op* next = ops->reg_next_; // read first: `ops` may be freed by its shutdown_
            ops->shutdown_(ops);
            ops = next;
        }
        std::unique_lock lock(mutex_);
        idle_.wait(lock, [this] { return posting_ == 0; });
    }

  private:
    ~op_registry() = default;

    void unlink(tracked_op& op) noexcept {
        (op.reg_prev_ != nullptr ? op.reg_prev_->reg_next_ : head_) = op.reg_next_;
        if (op.reg_next_ != nullptr) op.reg_next_->reg_prev_ = op.reg_prev_;
        op.reg_prev_ = op.reg_next_ = nullptr;
        op.track_ = tracked_op::track::none;
    }

    std::mutex mutex_;
    std::condition_variable idle_;     // posting_ reached 0 after shutdown; waited on by shutdown()
    tracked_op* head_ = nullptr;       // enlisted operations; guarded by mutex_
    std::size_t posting_ = 0;          // posts between begin_post() and end_post(); by mutex_
    bool shut_down_ = false;           // guarded by mutex_
    std::atomic<std::size_t> refs_{1}; // the service's, plus one per enlisted operation
};

/// The execution-context service that owns a registry and shuts it down with the context.
class registry_service final : public net::execution_context::service {
  public:
    static inline net::execution_context::id id; // NOLINT: Asio's service identification

    explicit registry_service(net::execution_context& ctx)
        : net::execution_context::service(ctx), registry_(new op_registry) {}
    registry_service(const registry_service&) = delete;
    registry_service& operator=(const registry_service&) = delete;
    ~registry_service() override { registry_->release(); }

    op_registry& registry() noexcept { return *registry_; }

  private:
    void shutdown() override { registry_->shutdown(); }

    op_registry* const registry_; // one reference, released by the destructor
};

/// The registry of `ex`'s execution context: `asio::query(ex, execution::context)` for
/// standard executors, `ex.context()` for old-style ones. Null for an executor with no
/// execution context (such operations are not tracked: their context must outlive them).
template <class Executor> op_registry* registry_for(const Executor& ex) {
    if constexpr (net::execution::is_executor<Executor>::value) {
        if constexpr (net::can_query<const Executor&, net::execution::context_t>::value) {
            using context_type =
                typename net::query_result<const Executor&, net::execution::context_t>::type;
            if constexpr (std::is_convertible_v<context_type, net::execution_context&>) {
                net::execution_context& ctx = net::query(ex, net::execution::context);
                return &net::use_service<registry_service>(ctx).registry();
            } else {
                return nullptr;
            }
        } else {
            return nullptr;
        }
    } else {
        net::execution_context& ctx = ex.context();
        return &net::use_service<registry_service>(ctx).registry();
    }
}

// ---- operations --------------------------------------------------------------------------------

/// The function object posted to the handler's executor. It owns the operation: invoked, it
/// completes it; destroyed without being invoked (the executor's context was destroyed with it
/// queued), it abandons it. Move-only; a moved-from one owns nothing. It carries the handler's
/// associated allocator, which `asio::defer` uses for the executor's operation.
template <class Op> class completion {
  public:
    using allocator_type = typename Op::handler_allocator;

    completion(Op* op, allocator_type alloc) noexcept : op_(op), alloc_(std::move(alloc)) {}
    completion(completion&& other) noexcept
        : op_(std::exchange(other.op_, nullptr)), alloc_(other.alloc_) {}
    completion(const completion&) = delete;
    completion& operator=(const completion&) = delete;
    completion& operator=(completion&&) = delete;
    ~completion() {
        if (op_ != nullptr) Op::abandon_op(op_);
    }

    allocator_type get_allocator() const noexcept { return alloc_; }

    void operator()() {
        Op* op = std::exchange(op_, nullptr); // complete() frees it, or throws having freed it
        op->complete();
    }

  private:
    Op* op_;               // owned; null once moved from or invoked
    allocator_type alloc_; // immutable
};

/// Whether a cancellation signal came before an operation's completion ran, and (debug builds)
/// the check that the two never overlap, which lossless cancellation needs: the signal comes
/// in the handler's execution context, so a strand or a single-threaded io_context serializes
/// them. Used by every operation (op_base) and by an immediate receive's slot handler.
class cancel_flag {
  public:
    /// The slot's signal: marks the flag; true unless `type` is `none` (no signal).
    bool signal(net::cancellation_type_t type) noexcept {
        if (type == net::cancellation_type::none) return false;
#ifndef NDEBUG
        // seq_cst, both sides: a Dekker pair with completing(), so that if the two overlap at
        // least one of them sees the other's flag.
        in_canceller_.store(true, std::memory_order_seq_cst);
        COCHAN_ASSERT(!completing_.load(std::memory_order_seq_cst), overlap_message);
#endif
        // release: the completion (possibly on another thread of the same executor) acquires.
        requested_.store(true, std::memory_order_release);
#ifndef NDEBUG
        // Cleared before the caller goes on to cancel the operation: once it is unlinked, its
        // completion may run (and free it) on another thread.
        in_canceller_.store(false, std::memory_order_seq_cst);
#endif
        return true;
    }

    /// The completion starts (debug builds: checks that no signal is running now).
    void completing() noexcept {
#ifndef NDEBUG
        completing_.store(true, std::memory_order_seq_cst);
        COCHAN_ASSERT(!in_canceller_.load(std::memory_order_seq_cst), overlap_message);
#endif
    }

    /// True if the signal came.
    bool requested() const noexcept {
        return requested_.load(std::memory_order_acquire);
    }

    /// completing(), then requested(): for a completion that reads the flag at once.
    bool completing_now() noexcept {
        completing();
        return requested();
    }

  private:
#ifndef NDEBUG
    static constexpr const char* overlap_message =
        "cancellation signal emitted concurrently with completion: lossless cancellation needs "
        "a strand or a single-threaded io_context";
#endif

    std::atomic<bool> requested_{false}; // set by the signal; read by the completion
#ifndef NDEBUG
    std::atomic<bool> completing_{false};   // set when the completion starts
    std::atomic<bool> in_canceller_{false}; // set while the signal marks the flag
#endif
};

/// The parts every operation shares: the handler, the work it keeps on the handler's executor,
/// its memory, its queue references (`Held`: a `queue_ref`, or a tuple of them for a select),
/// cancellation through the handler's slot, and the post.
///
/// A cancellation signal (delivered in the handler's execution context, as Asio requires)
/// either unlinks a waiting operation (it then completes `cancelled`) or, for a receive that
/// was already granted but has not been delivered, marks it so complete() hands the value back
/// to the channel and reports `cancelled`: a lost race (`recv || timer`) loses no value.
template <class Derived, class Held, class Handler> class op_base : public tracked_op {
  public:
    using executor_type = net::associated_executor_t<Handler, net::system_executor>;
    using handler_allocator = net::associated_allocator_t<Handler>;

  protected:
    using allocator =
        typename std::allocator_traits<handler_allocator>::template rebind_alloc<Derived>;
    using alloc_traits = std::allocator_traits<allocator>;

    op_base(Held held, Handler&& h)
        : tracked_op(&shutdown_op), held_(std::move(held)),
          alloc_(net::get_associated_allocator(h)), handler_(std::in_place, std::move(h)),
          work_(std::in_place, net::get_associated_executor(*handler_, net::system_executor())) {}

    /// Allocates the operation with the handler's associated allocator.
    template <class... Args> static Derived* create(Handler& h, Args&&... args) {
        allocator alloc(net::get_associated_allocator(h));
        Derived* p = alloc_traits::allocate(alloc, 1);
        try {
            return ::new (static_cast<void*>(p)) Derived(std::forward<Args>(args)...);
        } catch (...) {
            alloc_traits::deallocate(alloc, p, 1);
            throw;
        }
    }

    /// The registry of the handler executor's context (null if it has none).
    static op_registry* registry_of(const Handler& h) {
        return registry_for(net::get_associated_executor(h, net::system_executor()));
    }

    /// Frees the operation and drops its own queue reference (its operation state drops the
    /// waiter's, and gives back a value it still holds, as it is destroyed). Its handler may be
    /// engaged still (destroyed here) or already moved out or destroyed.
    static void deallocate(Derived* op) noexcept {
        Held held(std::move(op->held_)); // released last: may destroy a queue and its values
        allocator alloc(op->alloc_);
        op->~Derived();
        alloc_traits::deallocate(alloc, op, 1);
    }

    /// Abandons a done operation (see the protocol above): hand-back, handler, work, memory.
    static void abandon_op(Derived* op) noexcept {
        op->abandon_in_context();
        deallocate(op);
    }

    /// The context-bound parts of abandoning, in order: the slot, the values (a receive hands
    /// its value back first), the handler (user code may run), the work guard.
    void abandon_in_context() noexcept {
        disconnect_cancellation();
        static_cast<Derived*>(this)->release_values();
        handler_.reset();
        work_.reset();
    }

    /// Starts a created operation: enlists it, connects its cancellation, then takes its first
    /// step, `step()`: true if the operation waits (its notification posts it later), false if
    /// it is done (posted now: it never completes inside the initiating function). If the
    /// context is shutting down it never starts. If connecting the slot (which allocates) or the
    /// step throws (`bad_alloc`, `T`'s move), nothing stays enlisted, connected or linked: the
    /// operation is freed and the exception propagates from the initiating function.
    template <class Step> static void launch(Derived* op, op_registry* registry, Step step) {
        if (!op->enlist(registry)) {
            abandon_op(op);
            return;
        }
        bool waits = false;
        try {
            op->connect_cancellation();
            waits = step();
        } catch (...) {
            op->delist();
            op->disconnect_cancellation();
            deallocate(op); // the operation state unlinks (or was never linked) as it goes
            throw;
        }
        if (!waits) op->post_completion();
    }

    /// Installs the cancellation handler (when the handler has a connected slot).
    void connect_cancellation() {
        auto slot = net::get_associated_cancellation_slot(*handler_);
        if (slot.is_connected()) {
            slot.template emplace<canceller>(static_cast<Derived*>(this));
        }
    }

    void disconnect_cancellation() noexcept {
        auto slot = net::get_associated_cancellation_slot(*handler_);
        if (slot.is_connected()) slot.clear();
    }

    /// Enlists the operation (see the protocol). False if the context is shut down.
    bool enlist(op_registry* registry) noexcept {
        return registry == nullptr || registry->enlist(*this);
    }

    /// start() failed before linking: undo enlist().
    void delist() noexcept {
        if (this->registry_ != nullptr) this->registry_->delist(*this);
    }

    /// The operation is done (from start() if it never linked, else from notify_, once, after
    /// the channel released its lock): post its completion to the handler's executor, or hand
    /// it to the shutdown of that executor's context.
    void post_completion() noexcept { // NOLINT(bugprone-exception-escape): see post_to_executor
        auto* self = static_cast<Derived*>(this);
        op_registry* registry = this->registry_;
        if (registry == nullptr) {
            post_to_executor(self);
            return;
        }
        switch (registry->begin_post(*this)) {
        case op_registry::post_action::post:
            post_to_executor(self); // from here on the completion owns the operation
            registry->end_post();   // not `this`: the operation may be complete and freed
            return;
        case op_registry::post_action::handover: return; // shutdown() frees it
        case op_registry::post_action::free:
            deallocate(self);
            registry->release();
            return;
        }
    }

    /// complete() starts here: checks that the cancellation signal is not running concurrently
    /// (debug builds), then disconnects the slot. True if a cancellation signal came.
    bool begin_complete() noexcept {
        cancel_flag_.completing();
        disconnect_cancellation();
        return cancel_flag_.requested();
    }

    /// Frees the operation, then invokes its handler with `r`, by the operation's convention
    /// (Asio's rule: the memory is free
    /// before the handler runs, so the handler may reuse it).
    template <class Result> void deliver(Result&& r) {
        auto* self = static_cast<Derived*>(this);
        Handler h(std::move(*handler_));
        deallocate(self);
        invoke_handler<Derived::completes_by>(std::move(h), std::forward<Result>(r));
    }

    /// Builds the result with `make()`, then deliver()s it. If `make()` throws (`T`'s move),
    /// the operation is freed and the exception propagates out of the executor's run(), as
    /// Asio does: the handler is not called (a value stays with the state, which gives it back
    /// as it is destroyed).
    template <class Make> void deliver_made(Make make) {
        std::optional<decltype(make())> r;
        try {
            r.emplace(make());
        } catch (...) {
            deallocate(static_cast<Derived*>(this));
            throw;
        }
        deliver(std::move(*r));
    }

    Held held_; // the operation's own queue references; moved out by deallocate()

  private:
    friend completion<Derived>;

    /// shutdown() step 2 (see the protocol above).
    static void shutdown_op(tracked_op* t) noexcept {
        auto* op = static_cast<Derived*>(t);
        // Unlinks a waiting operation and notifies it (it then hands over, not posting);
        // leaves a done one alone.
        op->cancel();
        op->abandon_in_context();
        op_registry* registry = op->registry_;
        if (registry->shutdown_finished(*op)) {
            deallocate(op);
            registry->release();
        }
    }

    /// Posts the completion to the handler's executor, with the handler's allocator. If the
    /// post cannot allocate, the completion cannot be delivered: std::terminate (clang-tidy
    /// sees the bad_alloc path through Boost.Asio's any_io_executor).
    ///
    /// By `defer`, Asio's post with the continuation hint, as resume_on's poster does: the
    /// operation was completed by a send or receive, and the handler that made it is the one
    /// whose work this continues. On a thread running the handler's `io_context`, the
    /// completion goes to that thread's private queue (no lock, no wake-up of another thread)
    /// and runs when the current handler returns (a coroutine: when it suspends), unless
    /// another thread has taken it from the shared queue by then; from any other thread it is
    /// queued as by `post`. `post` would lock the scheduler's mutex and wake an idle thread on
    /// every wake-up, and that thread would contend for the channel (docs/decisions.md, D-016).
    static void post_to_executor(Derived* op) noexcept { // NOLINT(bugprone-exception-escape)
        auto ex = op->work_->get_executor();
        net::defer(ex, completion<Derived>(op, net::get_associated_allocator(*op->handler_)));
    }

    struct canceller {
        explicit canceller(Derived* s) noexcept : self(s) {} // no paren-aggregate-init in clang 14
        Derived* self;
        void operator()(net::cancellation_type_t type) const {
            // Unlinks a still-waiting operation; a no-op once it is done.
            if (self->cancel_flag_.signal(type)) self->cancel();
        }
    };

    [[no_unique_address]] allocator alloc_; // immutable; frees the operation
    std::optional<Handler> handler_;        // owner-only (see the protocol); empty once abandoned
    std::optional<net::executor_work_guard<executor_type>> work_; // as handler_
    cancel_flag cancel_flag_; // set by the canceller; read by complete() (begin_complete())
};

/// A receive: the operation state of the protocol (detail/op_state.hpp), with delivery
/// deferred to the posted completion, plus the Asio parts of op_base.
template <class Queue, class Handler, convention C>
class recv_op final : public op_base<recv_op<Queue, Handler, C>, queue_ref<Queue>, Handler>,
                      public cochan::detail::recv_op_state<Queue> {
    using T = typename Queue::value_type;
    using base = op_base<recv_op, queue_ref<Queue>, Handler>;
    using state = cochan::detail::recv_op_state<Queue>;
    friend base;
    friend completion<recv_op>;

  public:
    static constexpr convention completes_by = C;

    // The operation's own reference: the queue outlives it even if `rx` does not.
    recv_op(Queue* q, Handler&& h) : base(queue_ref<Queue>(q), std::move(h)), state(q) {}

    static void start(Queue* q, Handler&& h) {
        op_registry* registry = base::registry_of(h);
        recv_op* op = base::create(h, q, std::move(h));
        // A value taken at once keeps its permit until complete() runs, so a cancellation
        // arriving before then can always give it back.
        op->defer_delivery();
        base::launch(op, registry, [op] { return op->state::start(&notify, {}); });
    }

  private:
    static void
    notify(cochan::detail::waiter_base* w) noexcept { // NOLINT(bugprone-exception-escape)
        static_cast<recv_op&>(state::of(w)).post_completion();
    }

    /// Abandoning: a value this operation holds goes back to the channel.
    void release_values() noexcept { this->give_back(); }

    void complete() {
        if (this->begin_complete() && this->holds_value()) {
            // Cancelled after the grant but before delivery: give the value back (to the next
            // waiting receiver or the head of the buffer) and report cancelled.
            this->give_back();
            this->deliver(recv_result<T>(std::in_place_index<1>, recv_errc::cancelled));
            return;
        }
        this->deliver_made([this] { return this->result(); });
    }
};

/// A send: the operation state of the protocol plus the Asio parts of op_base.
template <class Queue, class Handler, convention C>
class send_op final : public op_base<send_op<Queue, Handler, C>, queue_ref<Queue>, Handler>,
                      public cochan::detail::send_op_state<Queue> {
    using T = typename Queue::value_type;
    using base = op_base<send_op, queue_ref<Queue>, Handler>;
    using state = cochan::detail::send_op_state<Queue>;
    friend base;
    friend completion<send_op>;

  public:
    static constexpr convention completes_by = C;

    template <class V>
    send_op(Queue* q, bool closed, V&& value, Handler&& h) // the reference: as recv_op's
        : base(queue_ref<Queue>(q), std::move(h)), state(q, closed, std::forward<V>(value)) {}

    template <class V> static void start(Queue* q, bool closed, V&& value, Handler&& h) {
        op_registry* registry = base::registry_of(h);
        send_op* op = base::create(h, q, closed, std::forward<V>(value), std::move(h));
        // A closed sender completes at once.
        base::launch(op, registry, [op] { return op->state::start(&notify, {}); });
    }

  private:
    static void
    notify(cochan::detail::waiter_base* w) noexcept { // NOLINT(bugprone-exception-escape)
        static_cast<send_op&>(state::of(w)).post_completion();
    }

    /// Abandoning: the unsent value (or the moved-from one a granted send left) is destroyed
    /// now, in the context: it may be an I/O object.
    void release_values() noexcept { this->discard(); }

    void complete() {
        this->begin_complete(); // a send done is not cancellable: the flag is not read
        // result() rethrows a move that threw when the channel admitted the value.
        this->deliver_made([this] { return this->result(); });
    }
};

// ---- immediate completions: the fast path ------------------------------------------------------
//
// An operation that can complete at once (a receive finds a value or the channel ended; a send
// finds a free permit, or the channel is unbounded, or the sender is closed or the channel
// refuses sends) does not become an op_base operation: no operation object, no registry, no
// work guard. The initiating function does the queue step itself, without linking, and posts
// ONE function object, `immediate_recv` or `immediate_send`, to the handler's executor, with
// the handler's associated allocator (so Asio's post makes the operation's one allocation
// from it). Who owns what, in each state:
//
//   taken      inside the initiating function. A receive holds the value it took and keeps its
//              permit (`deferred_delivery_`, as recv_op does: a cancellation before delivery
//              can always give it back). A send's value is in the channel, or (disconnected)
//              still in hand. Owner: the initiating thread; the function object is built on its
//              stack and owns the handler, the value (or the send's outcome) and a counted
//              queue reference.
//   posted     the function object is moved into the executor's queue (by asio::defer, inside
//              the initiating call: the context is alive, so no registry is needed). If the
//              post throws, the local function object abandons everything (below) and the
//              exception leaves the initiating function; the handler was never invoked.
//   invoked    the executor runs it (Asio has freed the executor operation's memory by then):
//              it takes the handler out, builds the result and calls the handler. Only then
//              is the value delivered and its permit released.
//   destroyed  without being invoked (the executor's context was destroyed with it queued, or
//              the post threw): abandoned as an op_base operation is: the slot is cleared, a
//              received value goes back to the channel (the next waiting receiver, else the
//              head of the buffer; its permit accounted by competing_queue::give_back), a
//              send's unsent value is destroyed, then the handler is destroyed, never invoked,
//              then the queue reference is dropped.
//
// A moved-from function object owns nothing (its queue reference is null).
//
// Cancellation. A receive completed at once can still be cancelled until its handler runs, as
// a granted one can: the initiating function installs `immediate_cancel` in the handler's slot
// (when connected), whose only state is the flag, in the slot's own storage. The signal (in
// the handler's execution context, serialized with the completion, as for recv_op) sets it;
// the invoked function object reads it, clears the slot, and if it was set gives the value
// back and completes `cancelled`. A send completed at once is not cancellable (its value is in
// the channel): no handler is installed, as recv_op/send_op's canceller does nothing then.

/// The cancellation handler of an immediate receive: a flag, read when the completion runs.
struct immediate_cancel : cancel_flag {
    void operator()(net::cancellation_type_t type) noexcept { signal(type); }
};

/// What both immediate completions share: the handler, the queue reference (whose presence
/// says the object owns anything), the post.
template <class Queue, class Handler> class immediate_base {
  public:
    using allocator_type = net::associated_allocator_t<Handler>;

    // Moves the handler only: the subclass's move constructor takes the queue reference last
    // (take_ownership), so if a move throws, the source still owns the value and abandons it
    // (see the protocol above; the handler, moved or not, is destroyed unrun).
    immediate_base(immediate_base&& other) noexcept(std::is_nothrow_move_constructible_v<Handler>)
        : handler_(std::move(other.handler_)) {}
    immediate_base(const immediate_base&) = delete;
    immediate_base& operator=(const immediate_base&) = delete;
    immediate_base& operator=(immediate_base&&) = delete;

    /// Asio's post allocates the executor's operation with it: the handler's allocator.
    allocator_type get_allocator() const noexcept {
        return net::get_associated_allocator(handler_);
    }

  protected:
    immediate_base(Queue* q, Handler&& h) : queue_(q), handler_(std::move(h)) {}
    ~immediate_base() = default;

    /// Posts `self` (the derived object, an rvalue built on the initiating thread's stack) to
    /// the handler's executor, by `defer` as op_base::post_to_executor does (an immediate
    /// completion continues the initiating handler, which returns or suspends next).
    template <class Self>
    requires(!std::is_lvalue_reference_v<Self>) static void post(Self&& self) {
        auto ex = net::get_associated_executor(self.handler_, net::system_executor());
        net::defer(ex, std::forward<Self>(self));
    }

    bool owns() const noexcept { return queue_.get() != nullptr; }

    /// The end of a move: `other` owns nothing any more.
    void take_ownership(immediate_base& other) noexcept { queue_ = std::move(other.queue_); }

    cochan::detail::queue_ref<Queue> queue_; // null once moved from or invoked
    Handler handler_;                        // a moved-from one is destroyed, never invoked
};

/// A receive completed at once (see the protocol above).
template <class Queue, class Handler, convention C>
class immediate_recv final : public immediate_base<Queue, Handler> {
    using T = typename Queue::value_type;
    using base = immediate_base<Queue, Handler>;

  public:
    immediate_recv(immediate_recv&& other) noexcept(
        std::is_nothrow_move_constructible_v<Handler>&& std::is_nothrow_move_constructible_v<T>)
        : base(std::move(other)), taken_(std::move(other.taken_)),
          cancel_(std::exchange(other.cancel_, nullptr)) {
        this->take_ownership(other);
    }
    immediate_recv(const immediate_recv&) = delete;
    immediate_recv& operator=(const immediate_recv&) = delete;
    immediate_recv& operator=(immediate_recv&&) = delete;
    ~immediate_recv() {
        if (!this->owns()) return;
        // Abandoned: the slot, the value back to the channel; then (members) the handler and
        // the queue reference.
        clear_slot();
        if (taken_.value_.has_value()) this->queue_->give_back(taken_);
    }

    /// Completes a receive at once if it can, by posting the completion: true then (`h` was
    /// moved from); false if the receive must wait (nothing was touched). Throws only if `T`'s
    /// move, the slot's allocation or the post throws; a value taken is given back then.
    static bool try_start(Queue* q, Handler& h) {
        cochan::detail::recv_waiter<T> taken;
        taken.deferred_delivery_ = true; // a value taken keeps its permit until delivered
        if (!q->recv_at_once(taken)) return false;
        // Done: a value held with its permit, or disconnected. From here on, whatever throws
        // leaves the value in the channel: this function gives it back, or `self` does.
        std::optional<immediate_recv> self;
        try {
            self.emplace(q, h, taken);
        } catch (...) { // the handler's or `T`'s move threw: `taken` still holds the value
            if (taken.value_.has_value()) q->give_back(taken);
            throw;
        }
        self->connect_cancellation();
        base::post(std::move(*self));
        return true;
    }

    void operator()() {
        bool cancelled = false;
        if (cancel_ != nullptr) {
            cancelled = cancel_->completing_now();
            clear_slot();
        }
        if (!taken_.value_.has_value()) { // the channel ended
            finish(recv_result<T>(std::in_place_index<1>, recv_errc::disconnected));
        } else if (cancelled) { // lost a race after taking the value: it goes back
            this->queue_->give_back(taken_);
            finish(recv_result<T>(std::in_place_index<1>, recv_errc::cancelled));
        } else {
            // If the move throws, the value stays: this object, destroyed by the executor,
            // gives it back (the exception leaves run(); the handler is not called).
            recv_result<T> r(std::in_place, std::move(*taken_.value_));
            taken_.value_.reset();
            if constexpr (Queue::bounded) {
                if (taken_.outcome_ == outcome::granted) this->queue_->release_permit();
            }
            finish(std::move(r));
        }
    }

    /// For try_start(): takes over the handler and the value `taken` holds.
    immediate_recv(Queue* q, Handler& h, cochan::detail::recv_waiter<T>& taken)
        : base(q, std::move(h)), taken_(std::move(taken)) {}

  private:
    void connect_cancellation() {
        auto slot = net::get_associated_cancellation_slot(this->handler_);
        if (slot.is_connected()) cancel_ = &slot.template emplace<immediate_cancel>();
    }

    void clear_slot() noexcept {
        if (std::exchange(cancel_, nullptr) != nullptr) {
            net::get_associated_cancellation_slot(this->handler_).clear();
        }
    }

    /// Drops the queue reference (the channel may go), then calls the handler.
    void finish(recv_result<T>&& r) {
        Handler h(std::move(this->handler_));
        this->queue_ = {};
        invoke_handler<C>(std::move(h), std::move(r));
    }

    cochan::detail::recv_waiter<T> taken_; // never linked: its value and outcome only
    immediate_cancel* cancel_ = nullptr;   // in the handler's slot; null if none installed
};

/// A queue whose sends may wait (`send_or_wait`): a channel's. A one-shot's never wait.
template <class Queue>
concept waiting_sends = requires(Queue& q,
                                 cochan::detail::send_waiter<typename Queue::value_type>& w) {
    q.send_or_wait(w);
};

/// A send completed at once (see the protocol above): sent, or refused with its value in hand.
template <class Queue, class Handler, convention C>
class immediate_send final : public immediate_base<Queue, Handler> {
    using T = typename Queue::value_type;
    using base = immediate_base<Queue, Handler>;

  public:
    immediate_send(immediate_send&& other) noexcept(
        std::is_nothrow_move_constructible_v<Handler>&& std::is_nothrow_move_constructible_v<T>)
        : base(std::move(other)), unsent_(std::move(other.unsent_)), refused_(other.refused_) {
        this->take_ownership(other);
    }
    immediate_send(const immediate_send&) = delete;
    immediate_send& operator=(const immediate_send&) = delete;
    immediate_send& operator=(immediate_send&&) = delete;
    ~immediate_send() {
        // Abandoned: an unsent value is destroyed now, in the context (it may be an I/O
        // object); then (members) the handler and the queue reference.
        if (this->owns()) unsent_.reset();
    }

    /// Completes a send of `v` at once if it can, by posting the completion: true then (`h` was
    /// moved from, and `v` too unless the send was refused); false if it must wait (`v` and `h`
    /// untouched). A queue whose sends never wait (a one-shot) always completes here: `full`
    /// there is final (a value was already sent), and refuses the send with the value back.
    /// Throws only if `T`'s move or the post throws (a value sent stays sent).
    static bool try_start(Queue* q, bool closed, T& v, Handler& h) {
        send_errc refused = send_errc::disconnected;
        if (!closed) {
            switch (q->try_send(v)) {
            case Queue::send_status::full:
                if constexpr (waiting_sends<Queue>) return false;
                refused = send_errc::full;
                break;
            case Queue::send_status::ok:
                base::post(immediate_send(q, h, std::nullopt, refused));
                return true;
            case Queue::send_status::disconnected: break;
            }
        }
        base::post(immediate_send(q, h, std::optional<T>(std::move(v)), refused));
        return true;
    }

    void operator()() {
        Handler h(std::move(this->handler_));
        std::optional<T> unsent = std::move(unsent_);
        this->queue_ = {};
        if (!unsent) {
            invoke_handler<C>(std::move(h), send_result<T>(std::in_place));
        } else {
            invoke_handler<C>(std::move(h),
                              send_result<T>(std::in_place_index<1>,
                                             send_error<T>{refused_, std::move(*unsent)}));
        }
    }

  private:
    immediate_send(Queue* q, Handler& h, std::optional<T>&& unsent, send_errc refused)
        : base(q, std::move(h)), unsent_(std::move(unsent)), refused_(refused) {}

    std::optional<T> unsent_; // a refused send's value; empty once sent
    send_errc refused_;       // why `unsent_` was refused
};

template <convention C> struct initiate_recv {
    template <class Handler, class Queue>
    void operator()(Handler&& h, const op_source<Queue>& source) const {
        using handler_t = std::decay_t<Handler>;
        handler_t handler(std::forward<Handler>(h));
        Queue* q = source.queue.get();
        if (immediate_recv<Queue, handler_t, C>::try_start(q, handler)) return; // the fast path
        recv_op<Queue, handler_t, C>::start(q, std::move(handler));
    }
};

template <convention C> struct initiate_send {
    template <class Handler, class Queue, class V>
    void operator()(Handler&& h, const op_source<Queue>& source, V&& value) const {
        using handler_t = std::decay_t<Handler>;
        using T = typename Queue::value_type;
        handler_t handler(std::forward<Handler>(h));
        // A one-shot launch passes the value as an rvalue (moved into the channel or the
        // operation); a deferred operation launched as an lvalue passes its stored value as a
        // const lvalue (copied, so launching it again sends the value again).
        if constexpr (std::is_lvalue_reference_v<V> ||
                      std::is_const_v<std::remove_reference_t<V>>) {
            T copy(value);
            start(source, copy, handler);
        } else {
            start(source, value, handler);
        }
    }

  private:
    /// The fast path, else a waiting send; `v` is moved from if the send is made.
    template <class Queue, class Handler>
    static void start(const op_source<Queue>& source, typename Queue::value_type& v, Handler& h) {
        Queue* q = source.queue.get();
        if (immediate_send<Queue, Handler, C>::try_start(q, source.closed, v, h)) return;
        // A queue whose sends never wait completed above.
        if constexpr (waiting_sends<Queue>) {
            send_op<Queue, Handler, C>::start(q, source.closed, std::move(v), std::move(h));
        }
    }
};

/// async_recv_many's handler around the user's: a receive of one value (the same operation as
/// async_recv's, so waiting, cancellation and the value handed back on a late cancellation are
/// that receive's), which on completion appends the value to `out` and takes up to `max - 1`
/// more that are buffered then, without waiting, and completes with the count. It runs where
/// the user's handler runs, so `out` is touched only there. It keeps its own queue reference:
/// the receive drops its own before calling it.
template <convention C, class Handler, class Queue, class Out> class recv_many_handler {
    using T = typename Queue::value_type;

  public:
    recv_many_handler(Handler&& h, Queue* q, Out* out, std::size_t max)
        : handler_(std::move(h)), queue_(q), out_(out), max_(max) {}

    using executor_type = net::associated_executor_t<Handler, net::system_executor>;
    executor_type get_executor() const noexcept {
        return net::get_associated_executor(handler_, net::system_executor());
    }
    using allocator_type = net::associated_allocator_t<Handler>;
    allocator_type get_allocator() const noexcept {
        return net::get_associated_allocator(handler_);
    }
    using cancellation_slot_type = net::associated_cancellation_slot_t<Handler>;
    cancellation_slot_type get_cancellation_slot() const noexcept {
        return net::get_associated_cancellation_slot(handler_);
    }

    void operator()(recv_result<T> r) {
        if (!r) {
            finish(recv_result<std::size_t>(std::in_place_index<1>, r.error()));
            return;
        }
        try {
            out_->push_back(std::move(*r));
        } catch (...) {
            // The value's permit was released with its delivery: it goes back if one is free,
            // as a value whose move out of a receive throws (docs/design.md, exception safety).
            std::optional<T> back(std::move(*r));
            queue_->give_back(back, false);
            throw;
        }
        std::size_t n = 1;
        if (max_ > 1) {
            auto more = queue_->try_recv_many(*out_, max_ - 1);
            if (more) n += *more;
        }
        finish(recv_result<std::size_t>(std::in_place, n));
    }

  private:
    /// Drops the queue reference (the channel may go), then calls the handler.
    void finish(recv_result<std::size_t>&& r) {
        queue_ = {};
        invoke_handler<C>(std::move(handler_), std::move(r));
    }

    Handler handler_;
    queue_ref<Queue> queue_;
    Out* out_; // the caller's, alive until the handler runs (as an Asio buffer is)
    std::size_t max_;
};

template <convention C> struct initiate_recv_many {
    template <class Handler, class Queue, class Out>
    void operator()(Handler&& h, const op_source<Queue>& source, Out* out, std::size_t max) const {
        using handler_t = recv_many_handler<C, std::decay_t<Handler>, Queue, Out>;
        initiate_recv<convention::result>{}(
            handler_t(std::forward<Handler>(h), source.queue.get(), out, max), source);
    }
};

#if COCHAN_ASIO_AWAITABLE
// ---- use_awaitable: completing inline ----------------------------------------------------------
//
// Every operation above completes through a post, never inside the initiating function, as
// Asio's rules ask of an asynchronous operation: for a callback that is what keeps it from
// running inside its caller. With `use_awaitable` there is no callback: the "handler" resumes
// the awaiting coroutine, and the post only puts a scheduler turn between the channel step and
// that resumption. So with the `use_awaitable` token, bare or in `as_tuple` or `redirect_error`
// (inline_token),
// the functions below return an awaitable of the adapter's own (a coroutine of Asio's awaitable
// type): it first does the channel step without waiting (try_recv / try_send) and, if that
// succeeds, returns the outcome to the awaiting coroutine at once: no operation object, no handler,
// no post. Otherwise (the step would wait, or fails: disconnected) it awaits the operation exactly
// as any token does. Two conditions keep what users rely on:
//
//   Cancellation. The step is taken only if the awaiting coroutine cannot be cancelled: its
//   cancellation state has no slot connected (co_spawn with `detached`, `use_future` or any
//   handler without a cancellation slot). A cancellable coroutine (a branch of awaitable
//   operators' `||`, of a parallel_group, or co_spawn bound to a slot) takes the posted path,
//   where a cancellation that comes before the completion runs hands the value back: with two
//   branches completing inline, both would take a value and `||` would drop the loser's.
//
//   Fairness. At most `inline_budget::limit` inline completions in a row on one thread: the
//   next operation takes the posted path, whose scheduler turn lets the context's other
//   handlers run. Without it a coroutine receiving from a channel that another thread keeps
//   full (or sending into an unbounded one) would hold its io_context thread for as long as
//   the values last. The count is per thread, shared by every coroutine the thread runs, and
//   starts again at every operation that takes the posted path.

/// The inline completions a thread has made since its last posted one (see above).
struct inline_budget {
    static constexpr unsigned limit = 64;

    /// True if one more inline completion is allowed now (the caller then makes it or not).
    static bool available() noexcept { return used() < limit; }
    static void spend() noexcept { ++used(); }
    /// An operation takes the posted path: a scheduler turn will come.
    static void reset() noexcept { used() = 0; }

  private:
    static unsigned& used() noexcept {
        thread_local unsigned n = 0;
        return n;
    }
};

/// The tokens whose operations may complete inline: `use_awaitable`, `as_tuple` around it
/// where the library has `as_tuple`, and `redirect_error` around it. `complete(token, args...)`
/// is what the awaitable returns for a completion with `args` (only ever a success: a clear
/// code, or a result holding a value).
template <class Token> struct inline_token : std::false_type {};
template <class Executor> struct inline_token<net::use_awaitable_t<Executor>> : std::true_type {
    // use_awaitable returns the one argument, or the one after the error code.
    template <class A>
    static std::decay_t<A> complete(const net::use_awaitable_t<Executor>&, A&& a) {
        return std::forward<A>(a);
    }
    template <class A>
    static std::decay_t<A> complete(const net::use_awaitable_t<Executor>&, error_code /*clear*/,
                                    A&& a) {
        return std::forward<A>(a);
    }
};
#ifdef COCHAN_ASIO_AS_TUPLE
template <class Executor>
struct inline_token<COCHAN_ASIO_AS_TUPLE<net::use_awaitable_t<Executor>>> : std::true_type {
    // as_tuple packs every argument.
    template <class... A>
    static std::tuple<std::decay_t<A>...>
    complete(const COCHAN_ASIO_AS_TUPLE<net::use_awaitable_t<Executor>>&, A&&... a) {
        return std::tuple<std::decay_t<A>...>(std::forward<A>(a)...);
    }
};
#endif
template <class Executor>
struct inline_token<net::redirect_error_t<net::use_awaitable_t<Executor>>> : std::true_type {
    using token_type = net::redirect_error_t<net::use_awaitable_t<Executor>>;
    // redirect_error stores the code in the caller's variable and returns the rest, as
    // use_awaitable does: the `_ec` operations complete with a code first.
    template <class A> static std::decay_t<A> complete(const token_type& t, error_code ec, A&& a) {
        t.ec_ = ec;
        return std::forward<A>(a);
    }
    // A completion with no code (async_recv, async_send: a result) passes through redirect_error
    // untouched, as Asio's own handler passes it, leaving the caller's variable as it was.
    template <class A> static std::decay_t<A> complete(const token_type&, A&& a) {
        return std::forward<A>(a);
    }
};
template <class Token> inline constexpr bool awaitable_token = inline_token<Token>::value;

/// async_recv / async_recv_ec with an awaitable token (see above).
template <convention C, class Signature, class Token, class Queue>
typename net::async_result<Token, Signature>::return_type recv_awaitable(op_source<Queue> source,
                                                                         Token token) {
    using T = typename Queue::value_type;
    if (inline_budget::available()) {
        auto state = co_await net::this_coro::cancellation_state;
        if (!state.slot().is_connected()) {
            recv_result<T> r = source.queue->try_recv();
            if (r) {
                inline_budget::spend();
                if constexpr (C == convention::result) {
                    co_return inline_token<Token>::complete(token, std::move(r));
                } else {
                    co_return inline_token<Token>::complete(token, error_code(), std::move(*r));
                }
            }
        }
    }
    inline_budget::reset();
    co_return co_await net::async_initiate<Token, Signature>(initiate_recv<C>{}, token,
                                                             std::move(source));
}

/// async_send / async_send_ec with an awaitable token (see above).
template <convention C, class Signature, class Token, class Queue>
typename net::async_result<Token, Signature>::return_type
send_awaitable(op_source<Queue> source, typename Queue::value_type value, Token token) {
    using T = typename Queue::value_type;
    if (!source.closed && inline_budget::available()) {
        auto state = co_await net::this_coro::cancellation_state;
        if (!state.slot().is_connected() &&
            source.queue->try_send(value) == Queue::send_status::ok) {
            inline_budget::spend();
            if constexpr (C == convention::result) {
                co_return inline_token<Token>::complete(token, send_result<T>(std::in_place));
            } else {
                co_return inline_token<Token>::complete(token, error_code(), std::optional<T>());
            }
        }
    }
    inline_budget::reset();
    co_return co_await net::async_initiate<Token, Signature>(initiate_send<C>{}, token,
                                                             std::move(source), std::move(value));
}
/// async_recv_many / async_recv_many_ec with an awaitable token: what is buffered, taken inline
/// (up to `max`, one lock section) under the conditions above; otherwise the operation.
template <convention C, class Signature, class Token, class Queue, class Out>
typename net::async_result<Token, Signature>::return_type
recv_many_inline(op_source<Queue> source, Out* out, std::size_t max, Token token) {
    if (inline_budget::available()) {
        auto state = co_await net::this_coro::cancellation_state;
        if (!state.slot().is_connected()) {
            auto r = source.queue->try_recv_many(*out, max);
            if (r) {
                inline_budget::spend();
                if constexpr (C == convention::result) {
                    co_return inline_token<Token>::complete(token, std::move(r));
                } else {
                    co_return inline_token<Token>::complete(token, error_code(), *r);
                }
            }
        }
    }
    inline_budget::reset();
    co_return co_await net::async_initiate<Token, Signature>(initiate_recv_many<C>{}, token,
                                                             std::move(source), out, max);
}
#endif // COCHAN_ASIO_AWAITABLE

/// Starts a receive with `token`: the inline-first awaitable for an awaitable token (above),
/// Asio's async_initiate for any other.
template <convention C, class Signature, class Token, class Queue>
auto start_recv(Token&& token, op_source<Queue> source) {
#if COCHAN_ASIO_AWAITABLE
    if constexpr (awaitable_token<std::decay_t<Token>>) {
        return recv_awaitable<C, Signature>(std::move(source), token);
    } else
#endif
    {
        return net::async_initiate<Token, Signature>(initiate_recv<C>{}, token, std::move(source));
    }
}

/// Starts a send of `value` with `token`, as start_recv.
template <convention C, class Signature, class Token, class Queue>
auto start_send(Token&& token, op_source<Queue> source, typename Queue::value_type value) {
#if COCHAN_ASIO_AWAITABLE
    if constexpr (awaitable_token<std::decay_t<Token>>) {
        return send_awaitable<C, Signature>(std::move(source), std::move(value), token);
    } else
#endif
    {
        return net::async_initiate<Token, Signature>(initiate_send<C>{}, token, std::move(source),
                                                     std::move(value));
    }
}

/// Starts a receive of up to `max` values into `out` with `token`, as start_recv.
template <convention C, class Signature, class Token, class Queue, class Out>
auto start_recv_many(Token&& token, op_source<Queue> source, Out* out, std::size_t max) {
#if COCHAN_ASIO_AWAITABLE
    if constexpr (awaitable_token<std::decay_t<Token>>) {
        return recv_many_inline<C, Signature>(std::move(source), out, max, token);
    } else
#endif
    {
        return net::async_initiate<Token, Signature>(initiate_recv_many<C>{}, token,
                                                     std::move(source), out, max);
    }
}

/// A select: one receive state per channel (detail/select_branches.hpp) joined to one claim
/// (detail/select_claim.hpp), plus the Asio parts of op_base. Every branch defers its delivery,
/// so the winner's value keeps its permit until complete() and a cancellation that comes after
/// the decision still hands it back. The claim's one notification is the operation's
/// `notify_`: it posts the completion, as a single receive's does.
///
/// Cancellation (the slot's canceller, or the context's shutdown) decides the claim
/// `cancelled` if nobody has; the branches stay linked (their channels skip them) until
/// complete() or abandoning unlinks them. The registry protocol above is unchanged: a channel
/// that decided the claim has written the winner's value under its lock before it notifies.
template <class Handler, convention C, class... Queues>
class select_op final
    : public op_base<select_op<Handler, C, Queues...>, std::tuple<queue_ref<Queues>...>, Handler> {
    using base = op_base<select_op, std::tuple<queue_ref<Queues>...>, Handler>;
    using branches_type = cochan::detail::select_branches<Queues...>;
    using select_claim = cochan::detail::select_claim;
    friend base;
    friend completion<select_op>;

  public:
    using result_type = typename branches_type::result_type;
    static constexpr convention completes_by = C;

    // The operation's own references: every channel outlives it even if the receivers do not.
    select_op(Handler&& h, Queues*... q)
        : base(std::tuple<queue_ref<Queues>...>(queue_ref<Queues>(q)...), std::move(h)),
          claim_(static_cast<int>(sizeof...(Queues)), &wake, this), branches_(q...) {}

    static void start(Handler&& h, Queues*... q) {
        op_registry* registry = base::registry_of(h);
        select_op* op = base::create(h, std::move(h), q...);
        op->branches_.defer_delivery();
        // Waits unless decided by this thread (nothing will notify) or by a notification that
        // came while the branches were linking. If a value's move throws, the claim is
        // abandoned (no channel grants now) and the branches unlink as they are destroyed.
        base::launch(op, registry,
                     [op] { return !op->branches_.link(op->claim_) && op->claim_.suspend(); });
    }

    /// The slot's canceller and the shutdown call this (see op_base): decides `cancelled` if
    /// nobody has decided yet, and then notifies. Any thread.
    void cancel() noexcept { claim_.cancel(); }

  private:
    /// The claim's notification (called once, by whoever decided, after its lock).
    static void wake(void* self) noexcept { static_cast<select_op*>(self)->post_completion(); }

    /// Abandoning: every branch unlinks, and a winner's value goes back to its channel.
    void release_values() noexcept { branches_.abandon_all_but(select_claim::open); } // no winner

    void complete() {
        const bool cancel_requested = this->begin_complete();
        const int decision = claim_.decision();
        branches_.abandon_all_but(decision);
        if (decision >= 0 && cancel_requested) {
            // Cancelled after the decision but before delivery: the value goes back (to the
            // next waiting receiver of its channel, else the head of its buffer).
            branches_.give_back(decision);
            this->deliver(result_type(std::in_place_index<1>, recv_errc::cancelled));
            return;
        }
        this->deliver_made([this, decision] { return branches_.result(decision); });
    }

    select_claim claim_;     // outlives the branches, which may stay linked until destroyed
    branches_type branches_; // owner only, except as select_claim.hpp says
};

template <convention C> struct initiate_select {
    template <class Handler, class... Queues>
    void operator()(Handler&& h, const op_source<Queues>&... sources) const {
        using handler_t = std::decay_t<Handler>;
        handler_t handler(std::forward<Handler>(h));
        select_op<handler_t, C, Queues...>::start(std::move(handler), sources.queue.get()...);
    }
};

} // namespace detail

/// Receives from `rx` as an Asio asynchronous operation. Completion signature
/// `void(cochan::recv_result<T>)`. The handler is always invoked through its associated
/// executor (`asio::system_executor` if it has none) by `asio::defer` (a post marked as a
/// continuation of the completing thread's work; see post_to_executor), never inside the
/// initiating function or the channel's lock; while the operation waits it keeps work on that
/// executor. Memory comes from the handler's associated allocator, also for the post. With the
/// `use_awaitable` token (or `as_tuple(use_awaitable)`, `redirect_error(use_awaitable, ec)`), a
/// value found at once may instead continue the coroutine inline, when no cancellation can
/// reach it (see "use_awaitable: completing inline").
///
/// Cancellation (the handler's cancellation slot; terminal, partial and total alike): a
/// waiting operation completes with `recv_errc::cancelled`. An operation already granted a
/// value whose handler has not run yet also completes with `cancelled`, and the value goes
/// back to the channel (to the next waiting receiver, else the head of the buffer), so a
/// `recv || timer` race loses nothing. That guarantee needs the cancellation signal and the
/// completion to be serialized, as Asio requires of cancellation slots: a single-threaded
/// `io_context`, or a strand (debug builds assert when they overlap).
///
/// Executor lifetime: if the handler executor's execution context is shut down (an
/// `io_context` destroyed) while the operation waits, is queued or is completing, the handler
/// is destroyed without being invoked, as Asio does, and a value the operation held goes back
/// to the channel. Nothing leaks and nothing runs twice.
///
/// Thread safety: as `rx.recv()`. The operation (and a lazy token's stored arguments) keeps
/// the channel alive; if the last receiver is dropped while it waits, it completes with
/// `disconnected`.
template <class Receiver, class CompletionToken>
auto async_recv(const Receiver& rx, CompletionToken&& token) {
    using T = typename Receiver::value_type;
    using signature = void(recv_result<T>);
    // The operation's source (a counted queue reference) is an initiation argument, so a lazy
    // token that stores its arguments keeps the channel alive (an awaitable too: it is the
    // coroutine's argument).
    return detail::start_recv<detail::convention::result, signature>(
        std::forward<CompletionToken>(token), make_op_source(rx));
}

/// Sends `value` through any sender as an Asio asynchronous operation, so generic Asio code
/// works over both kinds: through a bounded sender it waits while the channel is full; through
/// an unbounded one it never waits and completes at once (still through the handler's
/// executor, never inside this call; with `use_awaitable`, inline under the conditions
/// `async_recv` gives). Completion signature `void(cochan::send_result<T>)`; the value comes
/// back in the error on `disconnected` or `cancelled`. Executor, allocator, work and
/// executor lifetime: as `async_recv` (a send abandoned at shutdown destroys its value).
/// Cancellation: a waiting send completes with `send_errc::cancelled` and its value; a send already
/// granted a slot completes normally (its value is in the channel and cannot be taken back). If
/// `T`'s move throws while a slot is granted later, the exception is rethrown from the handler's
/// executor (its `run()`), not delivered to the handler.
///
/// Thread safety: as `tx.send(v)`; an SPMC sender must not have two sends in flight. The
/// operation keeps the channel alive.
template <class Sender, class CompletionToken>
requires requires(Sender& tx, typename Sender::value_type v) {
    tx.send(std::move(v)); // any sender this caller may send through (SPMC: non-const)
}
auto async_send(Sender& tx, typename Sender::value_type value, CompletionToken&& token) {
    using T = typename Sender::value_type;
    using signature = void(send_result<T>);
    return detail::start_send<detail::convention::result, signature>(
        std::forward<CompletionToken>(token), make_op_source(tx), std::move(value));
}

/// `async_recv` by Asio's convention: completion signature `void(error_code, T)`, where
/// `error_code` is this flavour's (`std::error_code` for standalone Asio,
/// `boost::system::error_code` for Boost.Asio). On success the code is clear and the value is
/// the one received; otherwise the code is a `recv_errc` (`disconnected`, `cancelled`) and the
/// value is `T()`, so `T` must be default-initializable (use `async_recv` otherwise). With
/// `use_awaitable` an error is thrown as `system_error`; `as_tuple`, `redirect_error`,
/// `use_future`, `deferred` and plain callbacks get the code. Everything else (where the handler
/// runs, cancellation and the value handed back, allocation, executor lifetime, thread safety)
/// is exactly as for `async_recv`: both are the same operation.
template <class Receiver, class CompletionToken>
requires std::default_initializable<typename Receiver::value_type>
auto async_recv_ec(const Receiver& rx, CompletionToken&& token) {
    using T = typename Receiver::value_type;
    using signature = void(error_code, T);
    return detail::start_recv<detail::convention::error_code, signature>(
        std::forward<CompletionToken>(token), make_op_source(rx));
}

/// `async_send` by Asio's convention: completion signature
/// `void(error_code, std::optional<T>)`. On success the code is clear and the optional empty
/// (the value is in the channel); otherwise the code is a `send_errc` (`disconnected`,
/// `cancelled`) and the optional holds the unsent value, handed back as `async_send` hands it
/// back in `send_error::value`. An optional rather than a `T`: there is no value to give on
/// success, and `T` need not be default-constructible (a socket). With `use_awaitable` an
/// error is thrown as `system_error` and the value is destroyed with the operation's result:
/// take it back with `as_tuple` or `redirect_error`. Everything else is exactly as for
/// `async_send`: both are the same operation.
template <class Sender, class CompletionToken>
requires requires(Sender& tx, typename Sender::value_type v) {
    tx.send(std::move(v)); // any sender this caller may send through (SPMC: non-const)
}
auto async_send_ec(Sender& tx, typename Sender::value_type value, CompletionToken&& token) {
    using T = typename Sender::value_type;
    using signature = void(error_code, std::optional<T>);
    return detail::start_send<detail::convention::error_code, signature>(
        std::forward<CompletionToken>(token), make_op_source(tx), std::move(value));
}

/// `rx.recv_many(out, max)` as an Asio asynchronous operation: appends to `out` (by
/// `out.push_back(T&&)`) what the channel has, up to `max` values, oldest first, waiting for
/// one when none is there. Completion signature `void(cochan::recv_result<std::size_t>)`: the
/// count appended (at least 1), or `disconnected` / `cancelled` with nothing appended. Values
/// are appended where the handler runs (through its executor, before it is called); `out` must
/// stay alive and untouched until then, as an Asio buffer does. With `use_awaitable` (bare or in
/// `as_tuple` or `redirect_error`), values found at once are taken inline under the conditions
/// `async_recv` gives.
///
/// It is `async_recv` for the first value (same handler executor, work, allocation, executor
/// lifetime, cancellation: a waiting operation completes `cancelled`, and a value granted whose
/// handler has not run yet goes back to the channel) followed, when it completes, by
/// `rx.try_recv_many(out, max - 1)`. Exception safety: if `out.push_back` throws, the exception
/// leaves the handler executor's `run()`, the handler is not called, and the value goes back to
/// the channel when it has room for it (values appended before stay in `out`). Thread safety: as
/// `rx.recv_many`. Requires `max >= 1` (checked in every build).
template <class Receiver, class Out, class CompletionToken>
requires requires(const Receiver& rx, Out& out) {
    rx.try_recv_many(out, std::size_t{1}); // a channel receiver, `out` with push_back(T&&)
}
auto async_recv_many(const Receiver& rx, Out& out, std::size_t max, CompletionToken&& token) {
    COCHAN_CHECK(max >= 1, "async_recv_many(rx, out, max, token) needs max >= 1");
    using signature = void(recv_result<std::size_t>);
    return detail::start_recv_many<detail::convention::result, signature>(
        std::forward<CompletionToken>(token), make_op_source(rx), &out, max);
}

/// `async_recv_many` by Asio's convention: completion signature `void(error_code, std::size_t)`,
/// the count appended with a clear code, or a `recv_errc` with 0. Otherwise exactly
/// `async_recv_many`.
template <class Receiver, class Out, class CompletionToken>
requires requires(const Receiver& rx, Out& out) {
    rx.try_recv_many(out, std::size_t{1});
}
auto async_recv_many_ec(const Receiver& rx, Out& out, std::size_t max, CompletionToken&& token) {
    COCHAN_CHECK(max >= 1, "async_recv_many_ec(rx, out, max, token) needs max >= 1");
    using signature = void(error_code, std::size_t);
    return detail::start_recv_many<detail::convention::error_code, signature>(
        std::forward<CompletionToken>(token), make_op_source(rx), &out, max);
}

/// `cochan::select` as an Asio asynchronous operation: the first value any of the receivers'
/// channels has. Completion signature `void(cochan::recv_result<std::variant<T_0, T_1, ...>>)`;
/// the variant's `index()` names the receiver the value came from. The token comes first (the
/// receivers are a pack):
///
///     auto r = co_await cochan::asio::async_select(asio::use_awaitable, urgent_rx, normal_rx);
///
/// Rules as `cochan::select`: biased to the lowest index, a channel disconnected and drained is
/// skipped (`disconnected` when all are), exactly one value is taken and none is granted to a
/// branch that cannot take it. Handler, executor, work, allocator, executor lifetime and thread
/// safety: as `async_recv` (one operation, one allocation for the whole select).
///
/// Cancellation (the handler's cancellation slot, any type): a waiting select completes with
/// `recv_errc::cancelled`; a select already decided for a value whose handler has not run yet
/// also completes with `cancelled`, and the value goes back to its channel (to the next waiting
/// receiver, else the head of the buffer). So `async_select(...) || timer` loses nothing, with
/// the same condition as `async_recv`: the cancellation signal and the completion serialized
/// (a single-threaded `io_context`, or a strand; debug builds assert otherwise). If `T`'s move
/// throws while the select takes a value, the exception propagates from the initiating call
/// (a value there at once) or the executor's `run()` (later); the value stays in its channel.
template <class CompletionToken, channel_receiver... Rx>
requires(sizeof...(Rx) >= 2) auto async_select(CompletionToken&& token, const Rx&... rx) {
    return detail::net::async_initiate<CompletionToken,
                                       void(cochan::detail::select_result_for<Rx...>)>(
        detail::initiate_select<detail::convention::result>{}, token, make_op_source(rx)...);
}

/// `async_select` by Asio's convention: completion signature
/// `void(error_code, std::variant<T_0, T_1, ...>)`; on an error (`recv_errc`) the variant is
/// value-initialized, so `T_0` must be default-initializable. Otherwise exactly `async_select`.
template <class CompletionToken, channel_receiver... Rx>
requires(
    sizeof...(Rx) >= 2 &&
    std::default_initializable<
        std::variant<typename Rx::value_type...>>) auto async_select_ec(CompletionToken&& token,
                                                                        const Rx&... rx) {
    return detail::net::async_initiate<CompletionToken,
                                       void(error_code, std::variant<typename Rx::value_type...>)>(
        detail::initiate_select<detail::convention::error_code>{}, token, make_op_source(rx)...);
}

/// A select over one receiver is a receive: deleted, and the compiler quotes the reason.
template <class CompletionToken, channel_receiver Rx>
void async_select(CompletionToken&&, const Rx&) = delete; // needs two receivers: async_recv
template <class CompletionToken, channel_receiver Rx>
void async_select_ec(CompletionToken&&, const Rx&) = delete; // needs two receivers: async_recv_ec

} // namespace cochan::COCHAN_ASIO_ADAPTER
