// cochan: a small runtime, optional (standard library only): a thread pool whose idle workers
// take the coroutines a busy one wakes, and `job`, a fire-and-forget coroutine spawned on it.
//
//     cochan::job consume(cochan::spmc::receiver<int> rx) {
//         while (auto v = co_await rx.recv()) work(*v); // runs on any worker
//     }
//
//     cochan::thread_pool pool;            // one worker per hardware thread
//     for (int i = 0; i < 8; ++i) pool.spawn(consume(rx));
//     ...
//     pool.join();                         // every job finished
//
// A job names its pool as its scheduler (cochan/scheduler.hpp): a channel that wakes it hands it
// to the pool, which queues it on the waking worker's own queue, where an idle worker takes
// (steals) it. A producer with no idle worker beside it keeps running, fills the buffer, and
// the consumers it woke drain it in runs when it suspends. docs/guide.md, "The shipped runtime".
#pragma once

#include <cochan/detail/config.hpp>
#include <cochan/detail/lock.hpp>
#include <cochan/resumption.hpp>
#include <cochan/scheduler.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace cochan {

class thread_pool;

/// A fire-and-forget coroutine run by a `thread_pool`: created suspended, started by
/// `thread_pool::spawn`, its frame freed when it finishes. Its promise names the pool as its
/// scheduler, so every channel operation it awaits resumes on the pool's workers. An exception
/// that leaves its body is kept by the pool and rethrown by `thread_pool::join()`.
/// A job destroyed without being spawned never runs. Move-only; not thread-safe (one owner).
class job {
  public:
    class promise_type;
    using handle_type = std::coroutine_handle<promise_type>;

    job(job&& other) noexcept : h_(std::exchange(other.h_, {})) {}
    job& operator=(job&&) = delete;
    job(const job&) = delete;
    job& operator=(const job&) = delete;
    ~job() {
        if (h_) h_.destroy();
    }

  private:
    friend class thread_pool;
    explicit job(handle_type h) noexcept : h_(h) {}
    handle_type h_; // owned until spawned
};

/// A thread pool for coroutines. Each worker has its own queue; a coroutine scheduled from a
/// worker goes to that worker's `next` slot (the one before moves to the end of its FIFO), one
/// scheduled from elsewhere to a shared queue. A worker runs its `next` slot first, then its
/// FIFO (oldest first), then the shared queue, then takes the oldest coroutine of another
/// worker's queue once it has waited there `steal_delay` (20 us by default); with nothing to
/// take it keeps looking for a while (a wake-up through the OS costs more), then sleeps until
/// work is scheduled.
/// Each coroutine runs inside `resumption_scope(*this)`, so the coroutines it wakes through a
/// channel go back to this pool even when their own promise names no scheduler.
///
/// Rules: the pool outlives every coroutine scheduled on it. A worker must not block waiting for
/// a coroutine of its own pool (a `blocking_*` call a job of the pool must answer, `join()`
/// from a job): with every worker blocked, nothing runs it.
/// Thread safety: `schedule`, `spawn` and `join` may be called from any thread, concurrently.
class thread_pool {
    struct worker;

  public:
    /// How long a coroutine waits in a busy worker's queue before an idle worker takes it, by
    /// default: long enough for a producer and consumers that hand values to each other
    /// quickly to stay on one worker, short beside real work (tens of microseconds a value).
    static constexpr std::chrono::microseconds default_steal_delay{20};

    /// One worker per hardware thread (at least one).
    thread_pool() : thread_pool(default_size()) {}
    /// `threads` workers (0 means one); `steal_delay`: see default_steal_delay (zero: an idle
    /// worker takes any queued coroutine at once).
    explicit thread_pool(std::size_t threads,
                         std::chrono::microseconds steal_delay = default_steal_delay)
        : steal_delay_(steal_delay) {
        if (threads == 0) threads = 1;
        workers_.reserve(threads);
        for (std::size_t i = 0; i < threads; ++i) {
            workers_.push_back(std::make_unique<worker>(this, i, threads));
        }
        try {
            for (auto& w : workers_) {
                w->thread = std::thread([this, p = w.get()] { run(*p); });
            }
        } catch (...) {
            stop();
            throw;
        }
    }
    thread_pool(const thread_pool&) = delete;
    thread_pool& operator=(const thread_pool&) = delete;

    /// Waits for every spawned job to finish (an exception one threw is dropped: call `join()`
    /// first to see it), then stops and joins the workers, after they ran every coroutine still
    /// queued.
    ~thread_pool() {
        wait_for_jobs();
        stop();
    }

    static std::size_t default_size() noexcept {
        const unsigned n = std::thread::hardware_concurrency();
        return n == 0 ? 1 : n;
    }

    std::size_t size() const noexcept { return workers_.size(); }

    /// Queues `h` to be resumed on a worker. Throws `std::bad_alloc` if the queue cannot grow
    /// (then `h` was not queued).
    void schedule(std::coroutine_handle<> h) {
        worker* here = current();
        if (here != nullptr && here->pool == this) {
            here->queue.push_next(h);
        } else {
            shared_.push(h);
        }
        wake_one_if_idle();
    }

    /// `co_await pool.schedule()`: the awaiting coroutine continues on one of the workers.
    struct schedule_awaitable {
        thread_pool* pool;
        static constexpr bool await_ready() noexcept { return false; }
        void await_suspend(std::coroutine_handle<> h) const { pool->schedule(h); }
        static constexpr void await_resume() noexcept {}
    };
    [[nodiscard]] schedule_awaitable schedule() noexcept { return {this}; }

    /// Starts `j` on a worker. `join()` waits for it.
    void spawn(job j);

    /// Blocks until every job spawned so far (and every job they spawned) has finished; then,
    /// if any of them exited with an exception, rethrows the first one (once). Not from a
    /// worker of this pool (checked).
    void join() {
        COCHAN_CHECK(current() == nullptr || current()->pool != this,
                     "thread_pool::join() called from one of its own workers");
        wait_for_jobs();
        std::exception_ptr e;
        {
            std::lock_guard lock(jobs_mutex_);
            e = std::exchange(first_exception_, nullptr);
        }
        if (e) std::rethrow_exception(e);
    }

  private:
    friend class job;

    /// A thief's last sighting of another worker's queue (run_queue::steal).
    struct sighting {
        std::uint64_t key = ~std::uint64_t{0};
        std::chrono::steady_clock::time_point at{};
    };

    /// A worker's queue, or the shared one: a FIFO of coroutine handles and, for a worker, a
    /// `next` slot (Go's runnext, Tokio's LIFO slot) holding the coroutine it woke last, which
    /// it runs first. Another worker takes from it only what has waited there for
    /// `steal_delay` (the oldest of the FIFO, else the slot): coroutines that hand off to each
    /// other quickly (a producer filling a buffer, consumers draining it) stay on one worker
    /// instead of bouncing between cores for every hand-off, while a coroutine stuck behind
    /// real work is taken by an idle worker a few microseconds later. The thief times the wait
    /// by its own clock (the pusher reads none). Everything under one short lock; `size_` is
    /// readable without it.
    class run_queue {
      public:
        void push(std::coroutine_handle<> h) {
            std::lock_guard lock(lock_);
            items_.push_back(h);
            // seq_cst: ordered before the pusher's read of `sleepers_` (wake_one_if_idle)
            // against a parking worker's increment of `sleepers_` and its read of this count.
            size_.fetch_add(1, std::memory_order_seq_cst);
        }
        /// Puts `h` in the `next` slot; a coroutine already there moves to the FIFO's end.
        void push_next(std::coroutine_handle<> h) {
            std::lock_guard lock(lock_);
            if (next_) items_.push_back(next_); // may throw: then nothing changed
            next_ = h;
            ++next_seq_;
            size_.fetch_add(1, std::memory_order_seq_cst); // as in push()
        }
        /// The owner's pop: the `next` slot first, but never more than `next_streak_limit`
        /// times in a row while the FIFO waits (two coroutines handing off to each other
        /// would keep the rest waiting).
        std::coroutine_handle<> pop() noexcept {
            if (size_.load(std::memory_order_relaxed) == 0) return {}; // a hint: checked below
            std::lock_guard lock(lock_);
            if (next_ && (items_.empty() || streak_ < next_streak_limit)) {
                ++streak_;
                return take_next();
            }
            streak_ = 0;
            return take_front();
        }
        /// Another worker's pop: what `seen` shows has been the oldest coroutine here (the
        /// FIFO's front, else the `next` slot's) for `steal_delay` or more.
        std::coroutine_handle<> steal(sighting& seen,
                                      std::chrono::microseconds steal_delay) noexcept {
            if (size_.load(std::memory_order_relaxed) == 0) return {}; // a hint
            std::lock_guard lock(lock_);
            if (items_.empty() && !next_) return {};
            // Which coroutine is oldest: the front (numbered by the pops before it), or the
            // slot's (numbered by its puts); the low bit tells them apart.
            const std::uint64_t key = !items_.empty() ? popped_ << 1 : next_seq_ << 1 | 1;
            const auto now = std::chrono::steady_clock::now();
            if (seen.key != key) {
                seen = {key, now};
                return {};
            }
            if (now - seen.at < steal_delay) return {};
            return !items_.empty() ? take_front() : take_next();
        }
        bool empty() const noexcept { return size_.load(std::memory_order_seq_cst) == 0; }

      private:
        std::coroutine_handle<> take_next() noexcept {
            size_.fetch_sub(1, std::memory_order_relaxed);
            return std::exchange(next_, {});
        }
        std::coroutine_handle<> take_front() noexcept {
            if (items_.empty()) return {};
            std::coroutine_handle<> h = items_.front();
            items_.pop_front();
            ++popped_;
            size_.fetch_sub(1, std::memory_order_relaxed);
            return h;
        }

        static constexpr unsigned next_streak_limit = 32;

        detail::channel_lock lock_;
        std::deque<std::coroutine_handle<>> items_; // guarded by lock_
        std::coroutine_handle<> next_;              // guarded by lock_
        std::uint64_t next_seq_ = 0;                // guarded by lock_: puts into next_
        std::uint64_t popped_ = 0;                  // guarded by lock_: pops from items_' front
        unsigned streak_ = 0;                       // guarded by lock_: next_ pops in a row
        std::atomic<std::size_t> size_{0}; // items_.size() + (next_ ? 1 : 0), written under lock_
    };

    struct worker {
        worker(thread_pool* p, std::size_t i, std::size_t n) : pool(p), index(i), seen(n) {}
        thread_pool* pool;
        std::size_t index;
        run_queue queue;
        std::vector<sighting> seen; // of each worker's `next` slot, by this worker only
        std::thread thread;
    };

    static worker*& current() noexcept {
        static thread_local worker* w = nullptr; // the worker this thread is, of whichever pool
        return w;
    }

    void run(worker& me) {
        current() = &me;
        for (;;) {
            std::coroutine_handle<> h = find_work(me);
            if (!h) h = search(me);
            if (!h) {
                if (!park()) return;
                continue;
            }
            resumption_scope scope(*this);
            h.resume();
        }
    }

    /// Own queue (its `next` slot first), then the shared one, then another worker's.
    std::coroutine_handle<> find_work(worker& me) noexcept {
        if (auto h = me.queue.pop()) return h;
        if (auto h = shared_.pop()) return h;
        const std::size_t n = workers_.size();
        for (std::size_t k = 1; k < n; ++k) {
            const std::size_t victim = (me.index + k) % n;
            if (auto h = workers_[victim]->queue.steal(me.seen[victim], steal_delay_)) return h;
        }
        return {};
    }

    /// Keeps looking for work a little while before sleeping: a coroutine scheduled meanwhile
    /// is taken without a wake-up through the OS. A searching worker is counted in `searching_`
    /// so that `schedule` does not wake a sleeping one for work it will find; one that finds
    /// work while others sleep wakes one of them, which searches in its turn.
    std::coroutine_handle<> search(worker& me) noexcept {
        searching_.fetch_add(1, std::memory_order_seq_cst);
        std::coroutine_handle<> h;
        for (int i = 0; i < search_pauses + search_yields && !h; ++i) {
            detail::spin_backoff(i, search_pauses);
            h = find_work(me);
        }
        searching_.fetch_sub(1, std::memory_order_seq_cst);
        if (h) wake_one_if_idle();
        return h;
    }

    bool any_queued() const noexcept {
        if (!shared_.empty()) return true;
        for (const auto& w : workers_) {
            if (!w->queue.empty()) return true;
        }
        return false;
    }

    /// Sleeps until woken. false: the pool is stopping and no coroutine is queued.
    bool park() {
        std::unique_lock lock(park_mutex_);
        // Announced before the queues are read (seq_cst both): a `schedule` whose push this
        // read misses reads `sleepers_` after its push and wakes this worker.
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        if (!any_queued() && !stopping_) {
            park_cv_.wait(lock, [this] { return wakeups_ > 0 || stopping_; });
            if (wakeups_ > 0) --wakeups_;
        }
        sleepers_.fetch_sub(1, std::memory_order_seq_cst);
        return !stopping_ || any_queued();
    }

    /// Wakes one sleeping worker, unless none sleeps or one is searching (it will find the work).
    void wake_one_if_idle() noexcept {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (sleepers_.load(std::memory_order_seq_cst) == 0 ||
            searching_.load(std::memory_order_seq_cst) != 0) {
            return;
        }
        std::lock_guard lock(park_mutex_);
        if (wakeups_ < sleepers_.load(std::memory_order_relaxed)) {
            ++wakeups_;
            park_cv_.notify_one();
        }
    }

    void stop() noexcept {
        {
            std::lock_guard lock(park_mutex_);
            stopping_ = true;
        }
        park_cv_.notify_all();
        for (auto& w : workers_) {
            if (w->thread.joinable()) w->thread.join();
        }
    }

    void wait_for_jobs() {
        std::unique_lock lock(jobs_mutex_);
        jobs_done_.wait(lock, [this] { return jobs_ == 0; });
    }

    void job_started() {
        std::lock_guard lock(jobs_mutex_);
        ++jobs_;
    }
    void job_finished(std::exception_ptr e) noexcept {
        std::lock_guard lock(jobs_mutex_);
        if (e && !first_exception_) first_exception_ = std::move(e);
        // Notified under the lock: `join()` may return, and the pool be destroyed, as soon as
        // the lock is released.
        if (--jobs_ == 0) jobs_done_.notify_all();
    }

    static constexpr int search_pauses = 64;
    static constexpr int search_yields = 64;

    std::chrono::microseconds steal_delay_;        // fixed after construction
    std::vector<std::unique_ptr<worker>> workers_; // fixed after construction
    run_queue shared_;                             // coroutines scheduled from other threads

    std::atomic<std::size_t> sleepers_{0};  // workers in park(); incremented under park_mutex_
    std::atomic<std::size_t> searching_{0}; // workers in search()
    std::mutex park_mutex_;
    std::condition_variable park_cv_;
    std::size_t wakeups_ = 0; // guarded by park_mutex_: wake-ups not yet taken by a sleeper
    bool stopping_ = false;   // guarded by park_mutex_

    std::mutex jobs_mutex_;
    std::condition_variable jobs_done_;
    std::size_t jobs_ = 0;               // guarded by jobs_mutex_: spawned and not finished
    std::exception_ptr first_exception_; // guarded by jobs_mutex_
};

class job::promise_type {
  public:
    job get_return_object() noexcept { return job(handle_type::from_promise(*this)); }
    static std::suspend_always initial_suspend() noexcept { return {}; }

    /// Frees the frame, then tells the pool (which `join()` may be waiting for).
    struct final_awaiter {
        static constexpr bool await_ready() noexcept { return false; }
        static void await_suspend(handle_type h) noexcept {
            thread_pool* pool = h.promise().pool_;
            std::exception_ptr e = std::move(h.promise().exception_);
            h.destroy();
            pool->job_finished(std::move(e));
        }
        static constexpr void await_resume() noexcept {}
    };
    static final_awaiter final_suspend() noexcept { return {}; }
    static constexpr void return_void() noexcept {}
    void unhandled_exception() noexcept { exception_ = std::current_exception(); }

    /// The pool resumes this job whenever a channel wakes it.
    scheduler_ref cochan_scheduler() const noexcept { return *pool_; }

  private:
    friend class thread_pool;
    thread_pool* pool_ = nullptr; // set by spawn, before the job first runs
    std::exception_ptr exception_;
};

inline void thread_pool::spawn(job j) {
    COCHAN_CHECK(j.h_, "thread_pool::spawn(job): the job was moved from");
    j.h_.promise().pool_ = this;
    job_started();
    try {
        schedule(j.h_);
    } catch (...) {
        job_finished(nullptr); // not started: `j` destroys it
        throw;
    }
    j.h_ = {}; // the frame is the pool's now: it frees itself when it finishes
}

} // namespace cochan
