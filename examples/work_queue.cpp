// work_queue: one producer coroutine feeds jobs to N consumer coroutines through a bounded SPMC
// channel, each job to exactly one consumer. All run on a thread pool: consumers work in parallel.
//   usage: work_queue [jobs=100000] [consumers=4]
// cochan ships no runtime: the first part of this file is the smallest one that can drive the
// example (a fire-and-forget coroutine type and a thread pool). Use your own executor instead.
#include <cochan/spmc.hpp>

#include <algorithm>
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
#include <thread>
#include <vector>

namespace {

// Fire-and-forget coroutine: starts running when called and frees itself when it finishes.
struct detached {
    struct promise_type {
        detached get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); } // nobody could catch it
    };
};

// Threads resuming posted coroutines in FIFO order. Thread-safe. Destruction drains the queue.
class thread_pool {
  public:
    explicit thread_pool(unsigned n) {
        for (unsigned i = 0; i < n; ++i)
            threads_.emplace_back([this](const std::stop_token& stop) { run(stop); });
    }
    void post(std::coroutine_handle<> h) {
        std::lock_guard lock(mutex_);
        queue_.push_back(h);
        cv_.notify_one();
    }
    // What `.resume_on(...)` wants: a cheap copyable callable taking a coroutine handle.
    auto executor() {
        return [this](std::coroutine_handle<> h) { post(h); };
    }
    // `co_await schedule_on(pool)`: suspend here and continue on one of the pool's threads.
    struct awaiter {
        thread_pool* pool;
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> h) const { pool->post(h); }
        void await_resume() const noexcept {}
    };
    friend awaiter schedule_on(thread_pool& pool) { return {&pool}; }

  private:
    void run(const std::stop_token& stop) {
        std::unique_lock lock(mutex_);
        while (cv_.wait(lock, stop, [this] { return !queue_.empty(); })) { // false: stop, empty
            const auto h = queue_.front();
            queue_.pop_front();
            lock.unlock();
            h.resume(); // outside the lock: the coroutine may post more work
            lock.lock();
        }
    }
    std::mutex mutex_;
    std::condition_variable_any cv_;
    std::deque<std::coroutine_handle<>> queue_;
    std::vector<std::jthread> threads_; // last: stopped and joined first
};

struct job {
    std::uint64_t id;
    std::string payload;
};

struct alignas(64) tally { // one per coroutine, written by it only; aligned: no false sharing
    unsigned long long count = 0, id_sum = 0, bad = 0; // bad: payloads that do not match the id
};

// GCC 12 miscompiles an aggregate temporary with non-trivial members built inside a co_await, as
// in `co_await tx.send(job{...})`: it is copied bitwise (its string freed twice). Build it first.

// [example-begin]
detached producer(thread_pool& pool, cochan::spmc::bounded_sender<job> tx, std::uint64_t jobs,
                  tally& sent, std::latch& done) {
    co_await schedule_on(pool); // start on a pool thread
    for (std::uint64_t id = 1; id <= jobs; ++id) {
        job next{id, "job #" + std::to_string(id)}; // built first: GCC 12 workaround, see above
        // Suspends while the channel is full; resumes on the pool once a slot frees up.
        auto r = co_await tx.send(std::move(next)).resume_on(pool.executor());
        if (!r) break; // every receiver is gone; r.error().value hands the job back
        ++sent.count;
        sent.id_sum += id;
    }
    tx.close(); // consumers drain what is buffered, then recv() reports disconnected
    done.count_down();
}

detached consumer(thread_pool& pool, cochan::spmc::bounded_receiver<job> rx, tally& mine,
                  std::latch& done) {
    co_await schedule_on(pool);
    // Each job is received by exactly one consumer; r is false once drained and disconnected.
    while (auto r = co_await rx.recv().resume_on(pool.executor())) {
        ++mine.count;
        mine.id_sum += r->id;
        mine.bad += r->payload == "job #" + std::to_string(r->id) ? 0 : 1; // the "work"
    }
    done.count_down();
}
// [example-end]

} // namespace

int main(int argc, char** argv) {
    const std::uint64_t jobs = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
    const auto consumers = static_cast<unsigned>(argc > 2 ? std::max(1, std::atoi(argv[2])) : 4);
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
    tally sent, total;
    std::vector<tally> received(consumers);
    std::latch done(consumers + 1); // every coroutine counts down once, as its last step
    thread_pool pool(threads);      // declared after `done`: joined before the latch dies
    {
        auto [tx, rx] = cochan::spmc::bounded<job>(64);
        for (unsigned i = 0; i < consumers; ++i) consumer(pool, rx, received[i], done);
        producer(pool, std::move(tx), jobs, sent, done);
    } // main's own receiver copy goes away; the consumers hold theirs
    done.wait();

    for (unsigned i = 0; i < consumers; ++i) {
        std::printf("consumer %u: %llu jobs\n", i, received[i].count);
        total.count += received[i].count;
        total.id_sum += received[i].id_sum;
        total.bad += received[i].bad;
    }
    const bool ok = sent.count == jobs && total.count == sent.count &&
                    total.id_sum == sent.id_sum && total.bad == 0;
    std::printf("total: %llu of %llu jobs on %u threads, %llu bad\ncheck: %s\n", total.count,
                sent.count, threads, total.bad, ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
