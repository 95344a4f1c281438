// work_queue: one producer coroutine feeds jobs to N consumer coroutines through a bounded
// single-producer/multi-consumer channel. Every coroutine runs on a small thread pool, so the
// consumers really work in parallel. Each job goes to exactly one consumer.
//
//   usage: work_queue [jobs=100000] [consumers=4]
//
// cochan is only the channel; it does not ship a runtime. The first part of this file is the
// smallest runtime that can drive the example: a fire-and-forget coroutine type and a thread
// pool. In a real program, use your own executor instead.
#include <cochan/spmc.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <latch>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

// ---- A minimal runtime ------------------------------------------------------------------------

// Fire-and-forget coroutine: starts running when called and frees itself when it finishes.
// Not thread-safe (stateless; the coroutine itself may move between threads).
struct detached {
    struct promise_type {
        detached get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); } // nobody could catch it
    };
};

// Fixed set of threads resuming posted coroutines in FIFO order.
// Thread-safe. The destructor finishes all queued work, then joins.
class thread_pool {
  public:
    explicit thread_pool(unsigned n) {
        for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this] { run(); });
    }
    ~thread_pool() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        cv_.notify_all();
        for (auto& t : threads_) t.join();
    }

    void post(std::coroutine_handle<> h) {
        {
            std::lock_guard lock(mutex_);
            queue_.push_back(h);
        }
        cv_.notify_one();
    }

    // What `.resume_on(...)` wants: a cheap copyable callable taking a coroutine handle.
    auto executor() {
        return [this](std::coroutine_handle<> h) { post(h); };
    }

  private:
    void run() {
        for (;;) {
            std::coroutine_handle<> h;
            {
                std::unique_lock lock(mutex_);
                cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
                if (queue_.empty()) return; // stopping, and nothing left to do
                h = queue_.front();
                queue_.pop_front();
            }
            h.resume(); // outside the lock: the coroutine may post more work
        }
    }

    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<std::coroutine_handle<>> queue_;
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

// `co_await schedule_on(pool)`: suspend here and continue on one of the pool's threads.
auto schedule_on(thread_pool& pool) {
    struct awaiter {
        thread_pool* pool;
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> h) const { pool->post(h); }
        void await_resume() const noexcept {}
    };
    return awaiter{&pool};
}

// ---- The application --------------------------------------------------------------------------

struct job {
    std::uint64_t id;
    std::string payload;
};

// The "work": FNV-1a, 64-bit.
std::uint64_t fnv1a(std::string_view s) {
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
}

// One per coroutine, each written by its own coroutine only; aligned to a cache line so the
// consumers' counters do not false-share.
struct alignas(64) tally {
    std::uint64_t count = 0;
    std::uint64_t id_sum = 0;
    std::uint64_t digest = 0; // order-independent (xor) digest of the payload hashes

    void add(std::uint64_t id, std::uint64_t hash = 0) {
        ++count;
        id_sum += id;
        digest ^= hash;
    }
};

// GCC 12 note: an aggregate temporary with non-trivial members built inside a co_await
// expression, as in `co_await tx.send(job{...})`, is miscompiled (it is copied bitwise, so its
// std::string later frees a pointer it does not own). Build such a value first, as below.

// [example-begin]
detached producer(thread_pool& pool, cochan::spmc::bounded_sender<job> tx, std::uint64_t jobs,
                  tally& sent, std::latch& done) {
    co_await schedule_on(pool); // start on a pool thread
    for (std::uint64_t id = 1; id <= jobs; ++id) {
        job next{id, "job #" + std::to_string(id)}; // built first: GCC 12 workaround, see above
        // Suspends while the channel is full; resumes on the pool once a slot frees up.
        auto r = co_await tx.send(std::move(next)).resume_on(pool.executor());
        if (!r) break; // every receiver is gone; r.error().value hands the job back
        sent.add(id);
    }
    tx.close(); // consumers drain what is buffered, then recv() reports disconnected
    done.count_down();
}

detached consumer(thread_pool& pool, cochan::spmc::bounded_receiver<job> rx, tally& mine,
                  std::latch& done) {
    co_await schedule_on(pool);
    // Each job is received by exactly one consumer; r is false once drained and disconnected.
    while (auto r = co_await rx.recv().resume_on(pool.executor()))
        mine.add(r->id, fnv1a(r->payload));
    done.count_down();
}
// [example-end]

std::uint64_t arg_or(int argc, char** argv, int i, std::uint64_t fallback) {
    return argc > i ? std::strtoull(argv[i], nullptr, 10) : fallback;
}

} // namespace

int main(int argc, char** argv) {
    const std::uint64_t jobs = arg_or(argc, argv, 1, 100000);
    const auto consumers =
        static_cast<unsigned>(std::max<std::uint64_t>(1, arg_or(argc, argv, 2, 4)));
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);

    tally sent;
    std::vector<tally> received(consumers);
    std::latch done(consumers + 1); // every coroutine counts down once, as its last step
    const auto start = std::chrono::steady_clock::now();
    {
        thread_pool pool(threads); // declared after `done`: joined before the latch dies
        {
            auto [tx, rx] = cochan::spmc::bounded<job>(64);
            for (unsigned i = 0; i < consumers; ++i) consumer(pool, rx, received[i], done);
            producer(pool, std::move(tx), jobs, sent, done);
        } // main's own receiver copy goes away; the consumers hold theirs
        done.wait();
    }
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;

    tally total;
    for (unsigned i = 0; i < consumers; ++i) {
        std::printf("consumer %u: %llu jobs\n", i,
                    static_cast<unsigned long long>(received[i].count));
        total.count += received[i].count;
        total.id_sum += received[i].id_sum;
        total.digest ^= received[i].digest;
    }
    const double secs = elapsed.count();
    std::printf("total: %llu jobs on %u threads in %.3f s (%.0f jobs/s), digest %016llx\n",
                static_cast<unsigned long long>(total.count), threads, secs,
                secs > 0 ? static_cast<double>(total.count) / secs : 0.0,
                static_cast<unsigned long long>(total.digest));

    const bool ok = sent.count == jobs && total.count == sent.count && total.id_sum == sent.id_sum;
    std::printf("check: %s (sent %llu, id sums %llu vs %llu)\n", ok ? "ok" : "FAILED",
                static_cast<unsigned long long>(sent.count),
                static_cast<unsigned long long>(sent.id_sum),
                static_cast<unsigned long long>(total.id_sum));
    return ok ? 0 : 1;
}
