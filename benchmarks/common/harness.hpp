// The pieces every benchmark binary shares: the workload's numbers, a per-consumer tally with
// its check, a fire-and-forget coroutine type and the two coroutine runtimes (a one-thread event
// loop and a thread pool: the tests' own, from tests/support/), a gang of OS threads, and the
// timing loop that turns one prepared sample into one Google Benchmark iteration.
//
// Nothing in here is cochan-specific: every peer is driven through the same tally, the same
// completion signal and the same timing loop.
#pragma once

#include "support/manual_scheduler.hpp" // tests/support/
#include "support/task.hpp"
#include "support/thread_pool.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bench {

// ---- The workload -----------------------------------------------------------------------------

/// Values moved per sample (benchmarks/README.md, "The workload").
inline constexpr std::uint64_t total_values = 16384;
/// Capacity of the bounded rows.
inline constexpr std::size_t bounded_capacity = 64;
/// An end marker for the peers that cannot drain after a close (benchmarks/README.md, Peers): never
/// a real value, which are 1..total_values.
inline constexpr std::uint64_t end_marker = ~std::uint64_t{0};

/// What a consumer does with a value after tallying it: nothing in the ecosystem workload (the
/// work-distribution benchmark burns CPU time instead).
struct no_work {
    void operator()(std::uint64_t) const noexcept {}
};

enum class queue_kind { bounded, unbounded };

inline const char* name(queue_kind q) {
    return q == queue_kind::bounded ? "bounded" : "unbounded";
}

/// P producers, C consumers. Producer p sends the values of [first(p), last(p)) + 1.
struct topology {
    unsigned producers;
    unsigned consumers;

    std::string name() const {
        return std::to_string(producers) + "p" + std::to_string(consumers) + "c";
    }
    std::uint64_t first(unsigned p) const { return total_values * p / producers; }
    std::uint64_t last(unsigned p) const { return total_values * (p + 1) / producers; }
};

/// The topologies of the ecosystem table: asyncband's 1P/{1,2,4,8}C and MPMC's 8P/1C and 8P/8C.
inline const std::vector<topology>& topologies() {
    static const std::vector<topology> all{{1, 1}, {1, 2}, {1, 4}, {1, 8}, {8, 1}, {8, 8}};
    return all;
}

// ---- What consumers received ------------------------------------------------------------------

/// One consumer's count and checksum, and the threads its code ran on. Written by its own
/// consumer only; cache-line aligned so consumers do not false-share. Read by the timing loop
/// after the sample's completion signal (which orders it).
struct alignas(64) tally {
    std::uint64_t count = 0;
    std::uint64_t sum = 0;
    std::thread::id last_thread{};
    std::thread::id threads[16]{}; // distinct threads seen (more than 16 are not told apart)
    unsigned distinct = 0;

    void add(std::uint64_t v) noexcept {
        ++count;
        sum += v;
        note_thread();
    }
    /// Called on each value: the common case (same thread as last time) is one compare.
    void note_thread() noexcept {
        const std::thread::id self = std::this_thread::get_id();
        if (self == last_thread) return;
        last_thread = self;
        for (unsigned i = 0; i < distinct; ++i) {
            if (threads[i] == self) return;
        }
        if (distinct < std::size(threads)) threads[distinct++] = self;
    }
};

/// The tallies of one sample, and its check: the values 1..`values` (the workload's by default),
/// each received once.
class tallies {
  public:
    explicit tallies(unsigned consumers, std::uint64_t values = total_values)
        : t_(consumers), values_(values) {}

    tally& operator[](unsigned i) noexcept { return t_[i]; }
    void reset() { std::fill(t_.begin(), t_.end(), tally{}); }

    /// Empty when every value arrived exactly once (by count and sum); otherwise what is wrong.
    std::string check() const {
        std::uint64_t count = 0, sum = 0;
        for (const tally& t : t_) {
            count += t.count;
            sum += t.sum;
        }
        const std::uint64_t expected = values_ * (values_ + 1) / 2;
        if (count == values_ && sum == expected) return {};
        return "checksum mismatch: received " + std::to_string(count) + " values (expected " +
               std::to_string(values_) + "), sum " + std::to_string(sum) + " (expected " +
               std::to_string(expected) + ")";
    }

    /// How many distinct threads ran consumer code in this sample.
    unsigned consumer_threads() const {
        std::vector<std::thread::id> seen;
        for (const tally& t : t_) {
            for (unsigned i = 0; i < t.distinct; ++i) {
                if (std::find(seen.begin(), seen.end(), t.threads[i]) == seen.end())
                    seen.push_back(t.threads[i]);
            }
        }
        return static_cast<unsigned>(seen.size());
    }

  private:
    std::vector<tally> t_;
    std::uint64_t values_;
};

// ---- Completion ------------------------------------------------------------------------------

/// Counts the tasks of a sample down to zero; the timing loop waits for zero. Thread-safe.
/// The wait has a generous timeout so a deadlocked peer aborts the run with a message instead
/// of hanging CI.
class completion {
  public:
    void reset(unsigned tasks) noexcept { left_.store(tasks, std::memory_order_relaxed); }

    /// The task's last action. release: publishes its tally to the waiter's acquire.
    /// The count drops under the mutex: a waiter can then see zero only once the last finish()
    /// has left the mutex, so it may destroy this object as soon as wait() returns. (It dropped
    /// before the mutex was taken until the round after c91f463: a waiter that saw zero early
    /// destroyed a `completion` on its stack while the last finish() was about to lock it, and
    /// the Boost.Fiber `mt` rows, whose fiber-creation step waits on one, hung on a dead mutex.)
    void finish() {
        std::lock_guard lock(mutex_);
        if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) cv_.notify_all();
    }

    bool done() const noexcept { return left_.load(std::memory_order_acquire) == 0; }

    void wait(const char* what) {
        std::unique_lock lock(mutex_);
        if (!cv_.wait_for(lock, std::chrono::seconds(60), [this] { return done(); })) {
            std::fprintf(stderr, "%s: no completion after 60 s (%u tasks left): deadlock?\n", what,
                         left_.load());
            std::abort();
        }
    }

  private:
    std::atomic<unsigned> left_{0};
    std::mutex mutex_;
    std::condition_variable cv_;
};

// ---- Coroutines -------------------------------------------------------------------------------
// The coroutine type and both runtimes are the tests' (tests/support/, standard library only).

/// A fire-and-forget coroutine, created suspended: nothing runs until the runtime resumes
/// `handle()`, exactly once. It frees itself when it finishes.
using task = cochan_test::lazy_detached;

/// The `current` runtime: a FIFO run queue of coroutine handles drained by the benchmark
/// thread itself (`run_all()`; `executor()` for `.resume_on(...)`). Single-threaded, without a
/// lock: `post` may only be called from the thread that runs it.
using event_loop = cochan_test::single_thread_scheduler;

/// The `mt` runtime: a cochan_test::thread_pool of W worker threads built with these options,
/// `thread_pool pool(workers, mt_pool_options)`. It resumes posted coroutine handles in FIFO
/// order from one locked queue (`executor()` for `.resume_on(...)`: cheap to copy, callable from
/// any thread). An idle worker first spins for a while watching for work (64 pause
/// instructions, then up to 936 `std::this_thread::yield()`s: about 0.5 ms on this machine when
/// nothing else runs), then sleeps on a condition variable; `post` wakes a sleeper only when no
/// worker is spinning. Without the spin, a woken coroutine is nearly always picked up by the
/// posting worker itself before a sleeping one has woken, and the consumers do not run in parallel.
/// The spin yields so that a spinning worker gives its core to any other runnable thread, the
/// benchmark thread woken at the end of a sample above all: with 20,000 pauses instead, two
/// spinning workers held both cores and a sample's end waited for one of them to finish its
/// spin (an empty sample took 0.55 ms, now 0.03; docs/decisions.md, D-012). Each job is resumed
/// inside a cochan::resumption_scope, as cochan's guide recommends for executors. Thread-safe.
/// The destructor finishes queued work, then joins.
inline constexpr cochan_test::pool_options mt_pool_options{.spin_rounds = 1000,
                                                           .resumption_scope = true};

// ---- OS threads -------------------------------------------------------------------------------

/// N OS threads created once per benchmark case and reused by every sample: `run()` releases
/// them all into `role(i)` and returns when every role returned. Thread creation therefore stays
/// outside the timed region; waking the threads and waiting for the last one are inside.
/// `set_role` and `run` are called by one thread (the benchmark thread).
class thread_gang {
  public:
    explicit thread_gang(unsigned n) {
        for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this, i] { work(i); });
    }
    thread_gang(const thread_gang&) = delete;
    thread_gang& operator=(const thread_gang&) = delete;
    ~thread_gang() {
        stopping_ = true;
        generation_.fetch_add(1, std::memory_order_release);
        generation_.notify_all();
        for (std::thread& t : threads_) t.join();
    }

    void set_role(std::function<void(unsigned)> role) { role_ = std::move(role); }

    /// Runs one round and waits for it.
    void run(const char* what) {
        done_.reset(static_cast<unsigned>(threads_.size()));
        // release: the role and the sample prepared before it synchronise with the workers'
        // acquire of the new generation.
        generation_.fetch_add(1, std::memory_order_release);
        generation_.notify_all();
        done_.wait(what);
    }

  private:
    void work(unsigned i) {
        std::uint32_t seen = 0;
        for (;;) {
            generation_.wait(seen, std::memory_order_acquire);
            seen = generation_.load(std::memory_order_acquire);
            if (stopping_) return;
            role_(i);
            done_.finish();
        }
    }

    std::function<void(unsigned)> role_; // written between rounds only
    std::atomic<std::uint32_t> generation_{0};
    std::atomic<bool> stopping_{false};
    completion done_;
    std::vector<std::thread> threads_;
};

/// A harness bug (a send failing while receivers are alive, an unexpected error code): the
/// numbers would be meaningless, so stop the run.
[[noreturn]] inline void fatal(const char* what) {
    std::fprintf(stderr, "benchmark harness: %s\n", what);
    std::abort();
}

// ---- Timing -----------------------------------------------------------------------------------

/// Set when any sample failed its check; main() turns it into the exit status (Google
/// Benchmark 1.7 exits 0 after SkipWithError).
inline std::atomic<bool> any_failure{false};

inline double process_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// The timing loop shared by every case. Each iteration is one sample:
///   c.prepare(t)   outside the timed region: build the channel, create the tasks/threads' work;
///   c.run()        timed: start the producer(s) and consumers, wait for all of them to finish
///                  (data operations, disconnection and task completion);
///   t.check()      outside: count and checksum, SkipWithError on a mismatch.
/// Counters: consumer_threads (mean distinct threads that ran consumer code per sample) and
/// cpu_per_wall (process CPU time / wall time over the timed regions); a case with
/// `add_counters(state, wall_total)` adds its own at the end. `values`: the sample's values.
template <class Case>
void measure(benchmark::State& state, Case& c, unsigned consumers,
             std::uint64_t values = total_values) {
    tallies t(consumers, values);
    double wall_total = 0, cpu_total = 0, threads_total = 0;
    std::int64_t samples = 0;
    for (auto _ : state) {
        t.reset();
        c.prepare(t);
        const double cpu0 = process_cpu_seconds();
        const auto t0 = std::chrono::steady_clock::now();
        c.run();
        const auto t1 = std::chrono::steady_clock::now();
        const double cpu1 = process_cpu_seconds();
        const double wall = std::chrono::duration<double>(t1 - t0).count();
        state.SetIterationTime(wall);
        wall_total += wall;
        cpu_total += cpu1 - cpu0;
        threads_total += t.consumer_threads();
        ++samples;
        if (std::string error = t.check(); !error.empty()) {
            any_failure = true;
            state.SkipWithError(error.c_str());
            break;
        }
    }
    if (samples > 0) {
        state.counters["consumer_threads"] = threads_total / static_cast<double>(samples);
        state.counters["cpu_per_wall"] = wall_total > 0 ? cpu_total / wall_total : 0.0;
        if constexpr (requires { c.add_counters(state, wall_total); })
            c.add_counters(state, wall_total);
    }
}

/// Runs the registered benchmarks; non-zero exit when a sample failed its check.
inline int run_main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    if (any_failure) {
        std::fprintf(stderr, "FAILED: at least one sample failed its count/checksum check\n");
        return 1;
    }
    return 0;
}

} // namespace bench
