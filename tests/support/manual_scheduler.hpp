// Deterministic executor for cochan's tests, and the benchmarks' single-threaded event loop:
// posted coroutines sit in a FIFO until someone explicitly runs them, so interleavings are
// fully scripted. Standard library only: the benchmarks include it without Catch2.
//
// manual_scheduler         thread-safe: post() may be called from any thread (a channel
//                          operation completed elsewhere may post here); running is normally
//                          done by the test thread.
// single_thread_scheduler  the same without the lock: every call on one thread (the
//                          benchmarks' `current` runtime, where a lock would be measured).
#pragma once

#include <cochan/resumption.hpp>

#include <coroutine>
#include <cstddef>
#include <deque>
#include <mutex>

namespace cochan_test {

// The lock of a single_thread_scheduler: none.
struct no_lock {
    void lock() const noexcept {}
    void unlock() const noexcept {}
};

// Thread-safe if Mutex is (std::mutex), else one thread only. Not movable: posters keep a
// pointer to it.
template <class Mutex> class basic_manual_scheduler {
  public:
    // Copyable callable handed to the library, e.g. `.resume_on(s.executor())`.
    // As thread-safe as the scheduler. Must not outlive its scheduler.
    class poster {
      public:
        explicit poster(basic_manual_scheduler& s) noexcept : scheduler_(&s) {}
        void operator()(std::coroutine_handle<> h) const { scheduler_->post(h); }
        friend bool operator==(const poster&, const poster&) = default;

      private:
        basic_manual_scheduler* scheduler_;
    };

    // Awaiter that parks the current coroutine in this scheduler's queue.
    // Not thread-safe (one per co_await).
    class schedule_awaiter {
      public:
        explicit schedule_awaiter(basic_manual_scheduler& s) noexcept : scheduler_(&s) {}
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> h) const { scheduler_->post(h); }
        void await_resume() const noexcept {}

      private:
        basic_manual_scheduler* scheduler_;
    };

    basic_manual_scheduler() = default;
    // resume_in_scope: run_one() resumes each handle inside a cochan::resumption_scope (the
    // benchmarks' `current` event loop, set up as cochan's guide recommends for event loops).
    explicit basic_manual_scheduler(bool resume_in_scope) noexcept : scoped_(resume_in_scope) {}
    basic_manual_scheduler(const basic_manual_scheduler&) = delete;
    basic_manual_scheduler& operator=(const basic_manual_scheduler&) = delete;

    void post(std::coroutine_handle<> h) {
        std::lock_guard lock(mutex_);
        queue_.push_back(h);
        ++posted_total_;
    }

    // Resumes the oldest pending handle. It is popped before resuming so the
    // coroutine may post itself (or others) again while it runs.
    bool run_one() {
        std::coroutine_handle<> h;
        {
            std::lock_guard lock(mutex_);
            if (queue_.empty()) return false;
            h = queue_.front();
            queue_.pop_front();
        }
        // outside the lock: the coroutine may call post()
        if (scoped_) {
            cochan::resume_in_scope(h);
        } else {
            h.resume();
        }
        return true;
    }

    // Runs until the queue is empty, including work posted meanwhile.
    std::size_t run_all() {
        std::size_t n = 0;
        while (run_one()) ++n;
        return n;
    }

    std::size_t pending() const {
        std::lock_guard lock(mutex_);
        return queue_.size();
    }

    // Every post() ever made, for asserting "exactly one wake-up".
    std::size_t posted_total() const {
        std::lock_guard lock(mutex_);
        return posted_total_;
    }

    // Forgets pending handles without resuming them. The frames are not
    // destroyed here; the test does that through the owning task objects.
    void discard_all() {
        std::lock_guard lock(mutex_);
        queue_.clear();
    }

    poster executor() noexcept { return poster(*this); }

    // `co_await sched.schedule();` moves the coroutine onto this scheduler.
    schedule_awaiter schedule() noexcept { return schedule_awaiter(*this); }

  private:
    mutable Mutex mutex_;
    std::deque<std::coroutine_handle<>> queue_;
    std::size_t posted_total_ = 0;
    bool scoped_ = false;
};

using manual_scheduler = basic_manual_scheduler<std::mutex>;
using single_thread_scheduler = basic_manual_scheduler<no_lock>;

} // namespace cochan_test
