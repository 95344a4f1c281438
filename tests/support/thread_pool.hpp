// The fixed-size thread pool of cochan's multi-threaded tests and of the benchmarks' `mt` rows.
// Runs coroutine handles (resumed) and plain functions, in FIFO order, from one locked queue.
// Standard library only: the benchmarks include it without Catch2.
#pragma once

#include "task.hpp"

#include <cochan/detail/lock.hpp>
#include <cochan/resumption.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace cochan_test {

// How an idle worker waits for work.
// - spin_rounds == 0 (the tests' default): it sleeps on the condition variable at once, and a
//   post() wakes a sleeper whenever there is one.
// - spin_rounds > 0: it first spins, watching the queue without the lock for that many rounds
//   (the first 64 a pause instruction each, the rest a std::this_thread::yield(), so that a
//   spinner leaves its core to any other thread that can run), then sleeps; post() wakes a sleeper
//   only when no worker is spinning, since a spinner will take the job. Work therefore waits for a
//   busy spinner rather than waking a sleeper: never post a job that blocks a pool thread until
//   another job runs. The benchmarks' `mt` rows use it (benchmarks/common/harness.hpp says why).
// - resumption_scope: each job is resumed inside a cochan::resumption_scope, so coroutines it
//   wakes with cochan's default resumption run on this worker once it suspends or returns (the
//   benchmarks' `mt` rows; cochan's guide recommends it for executors).
struct pool_options {
    int spin_rounds = 0;
    bool resumption_scope = false;
};

// Thread-safe. Not movable: posters keep a pointer to it. The destructor finishes all queued
// work (including work posted by running jobs), then joins.
class thread_pool {
  public:
    // Copyable callable handed to the library, e.g. `.resume_on(p.executor())`.
    // Thread-safe. Must not outlive its pool.
    class poster {
      public:
        explicit poster(thread_pool& p) noexcept : pool_(&p) {}
        void operator()(std::coroutine_handle<> h) const { pool_->post(h); }
        friend bool operator==(const poster&, const poster&) = default;

      private:
        thread_pool* pool_;
    };

    // `co_await pool.schedule();` continues the coroutine on a pool thread.
    class schedule_awaiter {
      public:
        explicit schedule_awaiter(thread_pool& p) noexcept : pool_(&p) {}
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> h) const { pool_->post(h); }
        void await_resume() const noexcept {}

      private:
        thread_pool* pool_;
    };

    // n == 0 is treated as 1 so queued work can always drain.
    explicit thread_pool(unsigned n, pool_options options = {})
        : spin_rounds_(std::max(options.spin_rounds, 0)), scoped_(options.resumption_scope) {
        n = std::max(n, 1u);
        threads_.reserve(n);
        try {
            for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this] { work(); });
        } catch (...) {
            stop_and_join(); // threads already started must not be left joinable
            throw;
        }
    }

    thread_pool(const thread_pool&) = delete;
    thread_pool& operator=(const thread_pool&) = delete;

    ~thread_pool() { stop_and_join(); }

    void post(std::coroutine_handle<> h) {
        bool wake = false;
        {
            std::lock_guard lock(mutex_);
            queue_.push_back(h);
            queued_.store(queue_.size(), std::memory_order_relaxed);
            wake = sleeping_ > 0 && spinning_.load(std::memory_order_relaxed) == 0;
        }
        if (wake) cv_.notify_one();
    }

    // A function runs as a coroutine that calls it, so the queue holds only handles. An
    // exception escaping it terminates (nobody could catch it).
    void post(std::function<void()> f) {
        const std::coroutine_handle<> h = call(std::move(f)).handle();
        try {
            post(h);
        } catch (...) {
            h.destroy(); // never started: nothing else refers to it
            throw;
        }
    }

    // A typed handle converts to both coroutine_handle<> and (being callable)
    // std::function<void()>; this exact match resolves the ambiguity.
    template <class Promise>
    requires(!std::is_void_v<Promise>) void post(std::coroutine_handle<Promise> h) {
        post(std::coroutine_handle<>(h));
    }

    poster executor() noexcept { return poster(*this); }
    schedule_awaiter schedule() noexcept { return schedule_awaiter(*this); }

    std::size_t size() const noexcept { return threads_.size(); }

    // Workers inside cv_.wait (or just woken from it, about to look at the queue again).
    unsigned sleeping() {
        std::lock_guard lock(mutex_);
        return sleeping_;
    }

  private:
    static lazy_detached call(std::function<void()> f) {
        f();
        co_return;
    }

    void work() {
        std::unique_lock lock(mutex_);
        for (;;) {
            if (!queue_.empty()) {
                const std::coroutine_handle<> h = queue_.front();
                queue_.pop_front();
                queued_.store(queue_.size(), std::memory_order_relaxed);
                lock.unlock();
                // outside the lock: jobs post more jobs
                if (scoped_) {
                    cochan::resume_in_scope(h);
                } else {
                    h.resume();
                }
                lock.lock();
                continue;
            }
            if (stopping_) return; // stopping and drained
            if (spin_rounds_ > 0) {
                // Spin: watch `queued_` without the lock for a while.
                spinning_.fetch_add(1, std::memory_order_relaxed);
                lock.unlock();
                const int rounds = spin_rounds_;
                for (int i = 0; i < rounds && queued_.load(std::memory_order_relaxed) == 0; ++i)
                    cochan::detail::spin_backoff(i, spin_pauses);
                lock.lock();
                spinning_.fetch_sub(1, std::memory_order_relaxed);
                if (!queue_.empty() || stopping_) continue;
            }
            ++sleeping_;
            cv_.wait(lock);
            --sleeping_;
        }
    }

    void stop_and_join() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        cv_.notify_all();
        for (auto& t : threads_) {
            if (t.joinable()) t.join();
        }
    }

    static constexpr int spin_pauses = 64; // then yields: see pool_options
    const int spin_rounds_;
    const bool scoped_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<std::coroutine_handle<>> queue_; // guarded by mutex_
    std::atomic<std::size_t> queued_{0};        // queue_.size(), for spinners to read unlocked
    std::atomic<unsigned> spinning_{0};         // workers in the spin phase
    unsigned sleeping_ = 0;                     // guarded by mutex_: workers inside cv_.wait
    bool stopping_ = false;                     // guarded by mutex_
    std::vector<std::thread> threads_;
};

} // namespace cochan_test
