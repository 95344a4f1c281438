// thread_bridge: plain OS threads feed coroutines, and coroutines feed a plain thread back.
// P producer threads blocking_send items into a bounded MPMC channel (each thread owns a sender
// clone); K consumer coroutines on a thread pool take them with `co_await rx.recv()` and send
// results on a second bounded channel, which main drains with blocking_recv(). The fast side
// waits for the slow one: threads block, coroutines suspend. Every item must come back once.
//   usage: thread_bridge [items per producer=20000] [producer threads=3] [consumers=4]
// The first part of this file is the minimal runtime of work_queue.cpp (less schedule_on).
#include <cochan/mpmc.hpp>

#include <algorithm>
#include <condition_variable>
#include <coroutine>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
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

struct work_result {
    std::uint64_t input, output;
    unsigned consumer; // who computed it, for the per-consumer counts
};

// The "work": a 64-bit mixing step (from splitmix64's finalizer).
constexpr auto mix = [](std::uint64_t x) { return (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull; };

// [example-begin]
// A producer thread: plain blocking code. blocking_send blocks this thread while the channel is
// full, and is woken by exactly the receive that frees its slot (no polling). It takes its sender
// clone by value: the thread owns it, and destroying it is how the thread says it is done.
// Its items are id * items + 1 ... (id + 1) * items: unique across producers.
// NOLINTNEXTLINE(performance-unnecessary-value-param)
void produce(unsigned id, cochan::mpmc::bounded_sender<std::uint64_t> tx, std::uint64_t items) {
    for (std::uint64_t i = 1; i <= items; ++i)
        if (!tx.blocking_send(id * items + i)) break; // every consumer is gone; the item came back
} // this thread's sender clone is destroyed: once all are, consumers drain, then `disconnected`

// A consumer coroutine. Started by main, it waits at once (nothing is sent yet). By default a
// coroutine woken by a send resumes on the sending thread, here a producer thread or main;
// resume_on(pool.executor()) posts it to the pool instead, so consumers run on the pool's threads.
detached consume(thread_pool& pool, unsigned id, cochan::mpmc::bounded_receiver<std::uint64_t> rx,
                 cochan::mpmc::bounded_sender<work_result> results) {
    while (auto item = co_await rx.recv().resume_on(pool.executor())) {
        const work_result r{*item, mix(*item), id};
        auto sent = co_await results.send(r).resume_on(pool.executor()); // waits while full
        if (!sent) break;                                                // main stopped receiving
    }
} // the results sender clone goes with the coroutine: the last one disconnects main's loop
// [example-end]

unsigned arg_or(int argc, char** argv, int i, unsigned fallback, unsigned max) {
    const unsigned long v = argc > i ? std::strtoul(argv[i], nullptr, 10) : fallback;
    return v > 0 && v <= max ? static_cast<unsigned>(v) : fallback;
}

} // namespace

int main(int argc, char** argv) {
    const std::uint64_t items = arg_or(argc, argv, 1, 20000, 1'000'000);
    const unsigned producers = arg_or(argc, argv, 2, 3, 64),
                   consumers = arg_or(argc, argv, 3, 4, 64);
    const std::uint64_t total = items * producers;

    std::vector<unsigned long long> handled(consumers);
    std::vector<unsigned char> seen(total + 1, 0); // seen[input]: whether it came back
    unsigned long long wrong = 0;
    thread_pool pool(2); // the coroutine runtime: 2 threads
    auto results = cochan::mpmc::bounded<work_result>(64);
    std::vector<std::jthread> producer_threads; // joined first, when main returns
    {
        auto work = cochan::mpmc::bounded<std::uint64_t>(64);
        for (unsigned c = 0; c < consumers; ++c) consume(pool, c, work.second, results.first);
        // std::jthread copies `work.first`: each producer thread gets its own sender clone.
        for (unsigned p = 0; p < producers; ++p)
            producer_threads.emplace_back(produce, p, work.first, items);
    } // main's own work endpoints go; the threads and coroutines hold theirs
    // Main sends no results. A channel disconnects when its *last* sender is gone, so main
    // closes its copy; consumers hold the other clones (made before the close).
    results.first.close();

    // Back on a plain thread: blocking_recv blocks main until a result arrives; it reports
    // `disconnected` once every consumer has finished and the channel is drained.
    while (auto r = results.second.blocking_recv()) {
        const bool valid = r->input >= 1 && r->input <= total && r->consumer < consumers;
        if (valid && r->output == mix(r->input) && seen[r->input]++ == 0)
            ++handled[r->consumer];
        else
            ++wrong; // out of range, miscomputed or a duplicate
    }

    for (unsigned c = 0; c < consumers; ++c)
        std::printf("consumer coroutine %u: %llu items\n", c, handled[c]);
    const auto missing = std::count(seen.begin() + 1, seen.end(), 0);
    const bool ok = missing == 0 && wrong == 0;
    std::printf("main thread: %td of %llu items missing, %llu wrong or duplicated\ncheck: %s\n",
                missing, static_cast<unsigned long long>(total), wrong, ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
} // the producer threads are joined (they are done); the pool finishes what is queued, then joins
