// cochan: the per-thread trampoline that resumes woken coroutines in constant stack.
#pragma once

#include <cochan/detail/waiter.hpp>

#include <utility>

namespace cochan::detail {

/// Resumes coroutines on the calling thread. The outermost call resumes at once; a call made
/// while a coroutine resumed by the trampoline is running (a chain of hand-offs) queues the
/// waiter, and the outermost call resumes it when the running coroutine suspends. The stack
/// therefore stays constant however long the chain. Thread safety: thread-local state only.
class trampoline {
  public:
    /// The default `waiter_base::notify_`: resume `w->handle_` through the trampoline.
    static void resume(waiter_base* w) noexcept {
        state& s = local();
        if (s.active) {
            w->next_ = nullptr;
            (s.tail != nullptr ? s.tail->next_ : s.head) = w;
            s.tail = w;
            return;
        }
        s.active = true;
        struct reset {
            state& s;
            ~reset() { s.active = false; }
        } guard{s};
        w->handle_.resume();
        while (s.head != nullptr) {
            waiter_base* next = s.head;
            s.head = next->next_;
            if (s.head == nullptr) s.tail = nullptr;
            next->handle_.resume();
        }
    }

  private:
    struct state {
        bool active = false;
        waiter_base* head = nullptr; // queued waiters; their coroutines are suspended, so alive
        waiter_base* tail = nullptr;
    };
    static state& local() noexcept {
        static thread_local state s;
        return s;
    }
};

} // namespace cochan::detail
