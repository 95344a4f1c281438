// cochan: resumption scopes, for event loops and thread pools that run coroutines using cochan.
//
//     void worker_loop(my_queue& q) {
//         while (auto h = q.pop()) {
//             cochan::resumption_scope scope; // wake-ups made by the task wait for it
//             h.resume();
//         }                                   // here: the woken coroutines run, in order
//     }
//
#pragma once

#include <cochan/detail/trampoline.hpp>
#include <cochan/scheduler.hpp>

#include <coroutine>

namespace cochan {

/// While a scope is alive on a thread, a coroutine woken there with cochan's default resumption
/// (a receive granted a value, a send admitted, a stop request, a disconnection) is not resumed
/// inside the call that woke it: it is queued on the thread's trampoline, and the outermost scope
/// resumes the queued coroutines one after another, in the order they were woken, when it ends.
/// Coroutines resumed that way run inside the same trampoline, so their own wake-ups queue too.
///
/// Why: without a scope, the outermost wake-up on a thread resumes the woken coroutine at once,
/// so a producer that sends into a channel with a waiting consumer switches to that consumer for
/// every value (a rendezvous per value). An executor that resumes each task inside a scope lets
/// the producer keep running until it suspends or returns, filling the buffer, after which the
/// consumers drain it in runs without suspending: the behaviour of Tokio's and Boost.Fiber's
/// schedulers, at the cost of running the consumers a little later (still on this thread).
///
/// Rules: a scope is a stack object of one thread. Do not block inside it waiting for a
/// coroutine woken inside it (a `blocking_*` call, joining, waiting on a future): that coroutine
/// runs only when the scope ends. Scopes nest; an inner one (or one opened while the thread is
/// already inside the trampoline) adds nothing.
/// Thread safety: thread-local; one scope belongs to the thread that made it.
class resumption_scope {
  public:
    resumption_scope() noexcept = default;
    /// A scope that also hands to `s` (its `schedule(handle)`) every coroutine woken on this
    /// thread with the default resumption whose promise names no scheduler of its own
    /// (cochan/scheduler.hpp), instead of queueing it here: what a thread pool's worker opens
    /// around each task so that the coroutines a task wakes can run on its other workers.
    /// `cochan::thread_pool` does it. Nested, the innermost scope with a scheduler decides.
    explicit resumption_scope(scheduler_ref s) noexcept : scheduling_(s) {}
    resumption_scope(const resumption_scope&) = delete;
    resumption_scope& operator=(const resumption_scope&) = delete;
    /// Resumes the coroutines woken inside the scope (if it is the outermost), in order.
    ~resumption_scope() = default;

  private:
    detail::trampoline::scheduling scheduling_{scheduler_ref{}}; // outlives the deferral's drain
    detail::trampoline::deferral deferral_;
};

/// Resumes `h` inside a `resumption_scope`: what an executor's run loop does for each task.
/// Returns once `h` has suspended or finished and every coroutine it woke (and they woke, in
/// turn) has run until it suspended or finished.
inline void resume_in_scope(std::coroutine_handle<> h) {
    resumption_scope scope;
    h.resume();
}

/// As resume_in_scope(h), in a scope with scheduler `s`.
inline void resume_in_scope(std::coroutine_handle<> h, scheduler_ref s) {
    resumption_scope scope(s);
    h.resume();
}

} // namespace cochan
