// thread_bridge: plain OS threads feed coroutines, and coroutines feed a plain thread back.
//
// P producer threads push work items with the blocking API (`tx.blocking_send(item)`) into a
// bounded MPMC channel (MPMC because several threads produce; each owns a sender clone). K
// consumer coroutines on a small coroutine thread pool take the items with
// `co_await rx.recv().resume_on(pool.executor())`, compute a result and send it on a second
// bounded channel, which the main thread drains with `blocking_recv()`. Both channels are
// bounded, so the fast side waits for the slow one: threads block, coroutines suspend. Every
// item must come back exactly once; the program checks it and exits 0 only then.
//
//   usage: thread_bridge [items per producer=20000] [producer threads=3] [consumers=4]
//
// The first part of this file is the same minimal runtime as work_queue.cpp: a fire-and-forget
// coroutine type and a thread pool. In a real program, use your own executor instead.
#include <cochan/mpmc.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace {

// ---- A minimal runtime (as in work_queue.cpp) -------------------------------------------------

// Fire-and-forget coroutine: starts running when called and frees itself when it finishes.
struct detached {
    struct promise_type {
        detached get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); }
    };
};

// Fixed set of threads resuming posted coroutines in FIFO order. Thread-safe. The destructor
// finishes all queued work, then joins.
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
            h.resume();
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

using count = unsigned long long;

struct work_item {
    std::uint64_t input; // unique across all producers: 1 ... P * items
};
struct work_result {
    std::uint64_t input, output;
    unsigned consumer; // who computed it, for the per-consumer counts
};

// The "work": a 64-bit mixing function (splitmix64's finalizer).
std::uint64_t mix(std::uint64_t x) {
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// [example-begin]
// A producer thread: plain blocking code. blocking_send blocks this thread while the channel is
// full, and is woken by exactly the receive that frees its slot (no polling). It takes its sender
// clone by value: the thread owns it, and destroying it is how the thread says it is done.
// NOLINTNEXTLINE(performance-unnecessary-value-param)
void produce(unsigned id, cochan::mpmc::bounded_sender<work_item> tx, std::uint64_t items,
             count& sent) {
    for (std::uint64_t i = 0; i < items; ++i) {
        const work_item item{id * items + i + 1};
        if (!tx.blocking_send(item)) break; // every consumer is gone; the item came back
        ++sent;
    }
} // this thread's sender clone is destroyed: once all are, consumers drain, then `disconnected`

// A consumer coroutine on the pool. By default a coroutine woken by a send resumes on the
// sending thread, which here would be a producer thread (or main); resume_on(pool.executor())
// posts it back to the pool instead, so consumers always run on the pool's threads.
detached consume(thread_pool& pool, unsigned id, cochan::mpmc::bounded_receiver<work_item> rx,
                 cochan::mpmc::bounded_sender<work_result> results) {
    co_await schedule_on(pool);
    while (auto item = co_await rx.recv().resume_on(pool.executor())) {
        const work_result r{item->input, mix(item->input), id};
        auto sent = co_await results.send(r).resume_on(pool.executor()); // waits while full
        if (!sent) break;                                                // main stopped receiving
    }
} // the results sender clone goes with the coroutine: the last one disconnects main's loop
// [example-end]

std::uint64_t arg_or(int argc, char** argv, int i, std::uint64_t fallback, std::uint64_t max) {
    const std::uint64_t v = argc > i ? std::strtoull(argv[i], nullptr, 10) : fallback;
    return v > 0 && v <= max ? v : fallback;
}

} // namespace

int main(int argc, char** argv) {
    const std::uint64_t items = arg_or(argc, argv, 1, 20000, 1'000'000);
    const auto producers = static_cast<unsigned>(arg_or(argc, argv, 2, 3, 64));
    const auto consumers = static_cast<unsigned>(arg_or(argc, argv, 3, 4, 64));
    const std::uint64_t total = items * producers;
    constexpr std::size_t capacity = 64;

    std::vector<count> sent(producers), handled(consumers);
    std::vector<unsigned char> seen(total + 1, 0); // seen[input]: how often it came back
    count received = 0, wrong = 0, duplicates = 0;
    std::uint64_t input_sum = 0;
    const auto start = std::chrono::steady_clock::now();
    {
        thread_pool pool(2); // the coroutine runtime: 2 threads
        std::vector<std::thread> producer_threads;
        auto results = cochan::mpmc::bounded<work_result>(capacity);
        {
            auto work = cochan::mpmc::bounded<work_item>(capacity);
            for (unsigned c = 0; c < consumers; ++c) consume(pool, c, work.second, results.first);
            // std::thread copies `work.first`: each producer thread gets its own sender clone.
            for (unsigned p = 0; p < producers; ++p)
                producer_threads.emplace_back(produce, p, work.first, items, std::ref(sent[p]));
        } // main's own work endpoints go; the threads and coroutines hold theirs
        // Main sends no results. A channel disconnects when its *last* sender is gone, so main
        // closes its copy; consumers hold the other clones (made before the close).
        results.first.close();

        // Back on a plain thread: blocking_recv blocks main until a result arrives; it reports
        // `disconnected` once every consumer has finished and the channel is drained.
        while (auto r = results.second.blocking_recv()) {
            ++received;
            if (r->input == 0 || r->input > total || r->consumer >= consumers) {
                ++wrong;
                continue;
            }
            if (seen[r->input]++ != 0) ++duplicates;
            if (r->output != mix(r->input)) ++wrong;
            input_sum += r->input;
            ++handled[r->consumer];
        }
        for (auto& t : producer_threads) t.join();
    } // the pool finishes what is queued (the consumers' last steps) and joins
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;

    count sent_total = 0, handled_total = 0;
    for (unsigned p = 0; p < producers; ++p) {
        std::printf("producer thread %u: sent %llu items with blocking_send\n", p, sent[p]);
        sent_total += sent[p];
    }
    for (unsigned c = 0; c < consumers; ++c) {
        std::printf("consumer coroutine %u: %llu items\n", c, handled[c]);
        handled_total += handled[c];
    }
    const count missing = static_cast<count>(std::count(seen.begin() + 1, seen.end(), 0));
    std::printf("main thread: %llu results with blocking_recv in %.3f s "
                "(%llu missing, %llu duplicates, %llu wrong)\n",
                received, elapsed.count(), missing, duplicates, wrong);

    const bool ok = sent_total == total && received == total && handled_total == total &&
                    missing == 0 && duplicates == 0 && wrong == 0 &&
                    input_sum == total * (total + 1) / 2;
    std::printf("check: %s\n", ok ? "ok (every item came back exactly once)" : "FAILED");
    return ok ? 0 : 1;
}
