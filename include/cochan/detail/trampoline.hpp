// cochan: the per-thread trampoline that resumes woken coroutines in constant stack.
#pragma once

#include <cochan/detail/config.hpp>
#include <cochan/detail/waiter.hpp>
#include <cochan/scheduler.hpp>

#include <utility>

namespace cochan::detail {

/// Resumes coroutines on the calling thread. The outermost call resumes at once; a call made
/// while a coroutine resumed by the trampoline is running (a chain of hand-offs), or while a
/// `deferral` is open, queues the waiter, and the outermost call resumes it when the running
/// coroutine suspends. The stack therefore stays constant however long the chain.
///
/// A queued waiter's coroutine is suspended and may be destroyed before its turn
/// (docs/contract.md, rule 8: a granted receiver destroyed before it resumes hands its value
/// on): its awaitable's destructor calls `withdraw()`, which takes it out of the queue, so the
/// trampoline never resumes a destroyed frame.
///
/// Thread safety: thread-local state only. A waiter queued on one thread's trampoline must be
/// resumed or destroyed on that thread (destroying it on another thread is checked).
class trampoline {
    struct state {
        bool active = false;
        waiter_base* head = nullptr; // queued waiters, doubly linked through next_/prev_; their
        waiter_base* tail = nullptr; // coroutines are suspended (a destroyed one is withdrawn)
        scheduler_ref scheduler;     // set by a `scheduling` scope: see scope_scheduler()
    };
    static state& local() noexcept {
        static thread_local state s;
        return s;
    }

  public:
    /// The default `waiter_base::notify_`: resume `w->handle_` through the trampoline.
    static void resume(waiter_base* w) noexcept {
        resume(w, [] {});
    }

    /// As resume(w); `before_queueing()` runs first when `w` is queued rather than resumed at
    /// once (an operation then takes its queue reference: it will run after this call).
    template <class F> static void resume(waiter_base* w, F&& before_queueing) noexcept {
        state& s = local();
        if (s.active) {
            before_queueing();
            enqueue(s, w);
            // Queued, not resumed: anything may happen to its frame before its turn.
            COCHAN_DETAIL_INTERLEAVE(trampoline_queued);
            return;
        }
        s.active = true;
        w->handle_.resume();
        drain(s);
    }

    /// The scheduler of the innermost `scheduling` scope open on this thread, or none: the
    /// default resumption hands a woken coroutine whose promise names no scheduler to it.
    static scheduler_ref scope_scheduler() noexcept { return local().scheduler; }

    /// While alive, `scope_scheduler()` on this thread is `s` (restored when it ends); an empty
    /// `s` keeps the current one. A pool's worker opens one around each task it runs.
    class scheduling {
      public:
        explicit scheduling(scheduler_ref s) noexcept : s_(local()), previous_(s_.scheduler) {
            if (s) s_.scheduler = s;
        }
        scheduling(const scheduling&) = delete;
        scheduling& operator=(const scheduling&) = delete;
        ~scheduling() { s_.scheduler = previous_; }

      private:
        state& s_;
        scheduler_ref previous_;
    };

    /// Takes `w` out of this thread's queue if it is queued there (its frame is being
    /// destroyed before it resumed). A no-op for a waiter that is not queued.
    static void withdraw(waiter_base* w) noexcept {
        if (w->queued_on_ == nullptr) return;
        state& s = local();
        COCHAN_CHECK(w->queued_on_ == &s,
                     "a coroutine queued for resumption on one thread was destroyed on another");
        (w->prev_ != nullptr ? w->prev_->next_ : s.head) = w->next_;
        (w->next_ != nullptr ? w->next_->prev_ : s.tail) = w->prev_;
        w->next_ = w->prev_ = nullptr;
        w->queued_on_ = nullptr;
    }

    /// While alive, resumptions on this thread are queued instead of run; the outermost one
    /// resumes them, in order, when it is destroyed. Notifying a batch of waiters inside a
    /// deferral means that no user code runs before every waiter of the batch is notified, so
    /// a resumed coroutine may destroy any other coroutine of the batch (it is withdrawn).
    class deferral {
      public:
        deferral() noexcept : s_(local()), outermost_(!s_.active) { s_.active = true; }
        deferral(const deferral&) = delete;
        deferral& operator=(const deferral&) = delete;
        ~deferral() {
            if (outermost_) drain(s_);
        }

      private:
        state& s_;
        bool outermost_;
    };

  private:
    static void enqueue(state& s, waiter_base* w) noexcept {
        w->next_ = nullptr;
        w->prev_ = s.tail;
        (s.tail != nullptr ? s.tail->next_ : s.head) = w;
        s.tail = w;
        w->queued_on_ = &s;
    }

    /// Resumes queued waiters until none is left, then leaves the trampoline. Call with
    /// `s.active` set, as its outermost user.
    static void drain(state& s) noexcept {
        while (s.head != nullptr) {
            waiter_base* w = s.head;
            s.head = w->next_;
            (s.head != nullptr ? s.head->prev_ : s.tail) = nullptr;
            w->next_ = w->prev_ = nullptr;
            w->queued_on_ = nullptr;
            w->handle_.resume();
        }
        s.active = false;
    }
};

/// Waiters completed under the lock, notified once the lock is released (rule: no user code
/// under the lock). A singly linked list through `next_`. Not thread-safe: one per operation.
class completion_batch {
  public:
    completion_batch() = default;
    completion_batch(const completion_batch&) = delete;
    completion_batch& operator=(const completion_batch&) = delete;

    /// Marks `w` done with `o`. Call under the lock, after unlinking `w`.
    void complete(waiter_base* w, outcome o) noexcept {
        w->state_ = wait_state::done;
        w->outcome_ = o;
        w->next_ = nullptr;
        (tail_ != nullptr ? tail_->next_ : head_) = w;
        tail_ = w;
    }

    /// Notifies every completed waiter in completion order. Call after unlocking. With more
    /// than one waiter the notifications run inside a trampoline deferral: no woken coroutine
    /// runs before every waiter of the batch is notified, so the first one woken may destroy
    /// another one of the batch (it is withdrawn from the queue) without a use-after-free.
    void notify_all() noexcept {
        waiter_base* w = std::exchange(head_, nullptr);
        if (w == nullptr) return;
        const bool several = w != tail_;
        tail_ = nullptr;
        if (several) {
            notify_several(w);
        } else {
            w->notify_(w);
        }
    }

    ~completion_batch() {
        if (head_ != nullptr) notify_all(); // inline: most operations complete nobody
    }

  private:
    /// The rare batch of several (a disconnection, a give-back that also admits a sender),
    /// out of line so that notify_all() stays small on the hand-off path.
    COCHAN_DETAIL_NOINLINE static void notify_several(waiter_base* w) noexcept {
        trampoline::deferral defer;
        while (w != nullptr) {
            waiter_base* next = w->next_; // read first: after notify_, `w` may be gone
            w->notify_(w);
            w = next;
        }
    }

    waiter_base* head_ = nullptr;
    waiter_base* tail_ = nullptr;
};

} // namespace cochan::detail
