// Minimal fixed-size thread pool for cochan's multi-threaded tests. Runs both
// coroutine handles (resumed) and plain functions, in FIFO order.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace cochan_test {

// Thread-safe. Not movable: posters keep a pointer to it.
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
    explicit thread_pool(unsigned n) {
        n = std::max(n, 1u);
        threads_.reserve(n);
        try {
            for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this] { worker_loop(); });
        } catch (...) {
            stop_and_join(); // threads already started must not be left joinable
            throw;
        }
    }

    thread_pool(const thread_pool&) = delete;
    thread_pool& operator=(const thread_pool&) = delete;

    // Drains the queue (including work posted by running jobs), then joins.
    ~thread_pool() { stop_and_join(); }

    void post(std::coroutine_handle<> h) { push(job{h}); }
    void post(std::function<void()> f) { push(job{std::move(f)}); }

    // A typed handle converts to both coroutine_handle<> and (being callable)
    // std::function<void()>; this exact match resolves the ambiguity.
    template <class Promise>
    requires(!std::is_void_v<Promise>) void post(std::coroutine_handle<Promise> h) {
        post(std::coroutine_handle<>(h));
    }

    poster executor() noexcept { return poster(*this); }
    schedule_awaiter schedule() noexcept { return schedule_awaiter(*this); }

    std::size_t size() const noexcept { return threads_.size(); }

  private:
    using job = std::variant<std::coroutine_handle<>, std::function<void()>>;

    void push(job j) {
        {
            std::lock_guard lock(mutex_);
            queue_.push_back(std::move(j));
        }
        cv_.notify_one();
    }

    void worker_loop() {
        for (;;) {
            job j;
            {
                std::unique_lock lock(mutex_);
                cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
                if (queue_.empty()) return; // stopping and drained
                j = std::move(queue_.front());
                queue_.pop_front();
            }
            // Run outside the lock: jobs post more jobs. An exception escaping
            // a function job terminates (it leaves the thread's function).
            if (auto* h = std::get_if<std::coroutine_handle<>>(&j)) {
                h->resume();
            } else {
                std::get<std::function<void()>>(j)();
            }
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

    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<job> queue_;
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

} // namespace cochan_test
