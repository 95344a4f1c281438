// micro_bench: single cochan operations, in nanoseconds per iteration.
//
//   micro/try_pair/<kind>/<queue>        one try_send (unbounded: send) + one try_recv,
//                                        uncontended, one thread, nobody waiting
//   micro/handoff/<kind>/<queue>         a receiver coroutine waits in recv(); one send hands it
//                                        the value and it resumes inline (cochan's default), takes
//                                        it and waits again: one suspend/resume hand-off
//   micro/wake_one_of_8/<kind>/<queue>   as handoff with 8 receivers waiting: each send wakes the
//                                        oldest, which waits again at the back
//   micro/cancel_recv/<kind>             a receiver coroutine waits in recv(token); request_stop()
//                                        completes it with `cancelled` and it resumes inline (the
//                                        iteration includes making the std::stop_source)
//   micro/recv_buffered/<none,token>     a parked receiver coroutine is resumed and awaits
//                                        recv() (none) or recv(token) with a token that can be
//                                        stopped but is not (token), finding the value that
//                                        try_send just buffered: a receive that does not wait
//   micro/blocking_buffered/<none,token> blocking_send into a free cell, then blocking_recv of
//                                        that value, on one thread, without a token (none) or
//                                        with one that can be stopped but is not (token): a
//                                        blocking pair that never blocks
//   micro/stop_token_baseline            std::stop_source + std::stop_callback + request_stop()
//                                        alone: the part of cancel_recv that is not cochan's
//   micro/lock_pair_baseline             two empty sections of the channel's lock (one
//                                        compare-and-swap and one store each), nothing inside:
//                                        the floor of try_pair, which takes the lock twice;
//                                        /atomic_wait: the lock of the platforms that release
//                                        with an exchange (sleeps without a time limit)
//   micro/lock_contended/<sleep>         4 threads (on 2 cores) take one lock in turn, each
//                                        holding it for 32 increments: ns per section, with each
//                                        way the lock can sleep (futex: Linux's default;
//                                        atomic_wait, table: the other platforms' defaults)
//   micro/blocking_pingpong/<kind>       two OS threads bounce a value through two channels with
//                                        blocking_send / blocking_recv: one round trip (two
//                                        hand-offs, each waking a blocked thread)
//   micro/mutex_cv_pingpong              the same round trip through two mutex + condition
//                                        variable slots: the reference for blocking_pingpong
#include "../common/channels.hpp"
#include "blocking.hpp"

#include <cochan/detail/lock.hpp>

#include <coroutine>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <utility>
#include <vector>

namespace {

using bench::fatal;
using bench::make_channel;
using bench::task;

/// A non-waiting send: try_send on a bounded channel, send on an unbounded one.
template <bool Bounded, class Tx> bool send_now(Tx& tx, std::uint64_t v) {
    if constexpr (Bounded)
        return static_cast<bool>(tx.try_send(v));
    else
        return static_cast<bool>(tx.send(v));
}

// ---- try_send + try_recv ------------------------------------------------------------------------

template <bool Multi, bool Bounded> void try_pair(benchmark::State& state) {
    auto [tx, rx] = make_channel<Multi, Bounded>();
    std::uint64_t v = 0;
    for (auto _ : state) {
        if (!send_now<Bounded>(tx, ++v)) fatal("try_pair: send failed");
        auto r = rx.try_recv();
        if (!r) fatal("try_pair: try_recv failed");
        benchmark::DoNotOptimize(*r);
    }
}

// ---- hand-off to waiting receivers -------------------------------------------------------------

/// Receives until disconnected, counting; resumed inline by whoever completes its recv.
template <class Rx> task waiting_receiver(Rx rx, std::uint64_t& received) {
    for (;;) {
        auto r = co_await rx.recv();
        if (!r) break;
        ++received;
    }
}

template <bool Multi, bool Bounded, unsigned Waiters> void handoff(benchmark::State& state) {
    std::uint64_t received = 0;
    auto [tx, rx] = make_channel<Multi, Bounded>();
    for (unsigned i = 0; i < Waiters; ++i) waiting_receiver(rx, received).handle().resume();
    std::uint64_t v = 0;
    for (auto _ : state) {
        if (!send_now<Bounded>(tx, ++v)) fatal("handoff: send failed");
    }
    tx.close(); // every receiver finishes and frees itself
    if (received != v) fatal("handoff: a value was not handed to a waiting receiver");
    if (!rx.empty()) fatal("handoff: values were buffered instead of handed off");
}

// ---- a receive that finds a value, with and without a stop token ---------------------------

struct buffered_rounds {
    std::coroutine_handle<> parked;
    bool finished = false;
    std::uint64_t sum = 0;
};

/// Suspends the coroutine and leaves its handle in `slot`, for the benchmark to resume.
struct park {
    std::coroutine_handle<>& slot;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) const noexcept { slot = h; }
    void await_resume() const noexcept {}
};

/// Each time it is resumed, receives one value (already buffered) with `token`, then parks.
template <class Rx> task buffered_receiver(Rx rx, buffered_rounds& rounds, std::stop_token token) {
    for (;;) {
        co_await park{rounds.parked};
        if (rounds.finished) break;
        auto r = co_await rx.recv(token);
        if (!r) fatal("recv_buffered: the buffered value was not received");
        rounds.sum += *r;
    }
}

template <bool WithToken> void recv_buffered(benchmark::State& state) {
    auto [tx, rx] = make_channel<false, true>();
    std::stop_source source; // never stopped: its token only makes a stop possible
    buffered_rounds rounds;
    buffered_receiver(rx, rounds, WithToken ? source.get_token() : std::stop_token{})
        .handle()
        .resume(); // parks
    std::uint64_t v = 0;
    std::uint64_t sum = 0;
    for (auto _ : state) {
        if (!tx.try_send(++v)) fatal("recv_buffered: try_send failed");
        sum += v;
        rounds.parked.resume(); // receives it and parks again
    }
    rounds.finished = true;
    rounds.parked.resume(); // ends the receiver
    if (rounds.sum != sum) fatal("recv_buffered: a value was lost");
}

// ---- cancellation -----------------------------------------------------------------------------

/// Waits in recv(token) with the token the benchmark left in `*slot`, expects `cancelled`, then
/// parks until the benchmark resumes it for the next round. Ends when `*slot` is empty.
struct cancel_rounds {
    std::optional<std::stop_token> token;
    std::coroutine_handle<> parked;
    std::uint64_t cancelled = 0;
};

template <class Rx> task cancelled_receiver(Rx rx, cancel_rounds& rounds) {
    for (;;) {
        co_await park{rounds.parked};
        if (!rounds.token) break;
        auto r = co_await rx.recv(*rounds.token);
        if (r || r.error() != cochan::recv_errc::cancelled) fatal("cancel: not cancelled");
        ++rounds.cancelled;
    }
}

template <bool Multi> void cancel_recv(benchmark::State& state) {
    auto [tx, rx] = make_channel<Multi, true>();
    cancel_rounds rounds;
    cancelled_receiver(rx, rounds).handle().resume(); // parks
    std::uint64_t iterations = 0;
    for (auto _ : state) {
        std::stop_source source;
        rounds.token = source.get_token();
        rounds.parked.resume(); // links a recv with the token and suspends
        source.request_stop();  // cancels it; the receiver resumes here, inline, and parks
        ++iterations;
    }
    rounds.token.reset();
    rounds.parked.resume(); // ends the receiver
    if (rounds.cancelled != iterations) fatal("cancel: a stop request did not cancel the recv");
}

void stop_token_baseline(benchmark::State& state) {
    struct counter {
        std::uint64_t* calls;
        void operator()() const noexcept { ++*calls; }
    };
    std::uint64_t calls = 0;
    for (auto _ : state) {
        std::stop_source source;
        std::stop_callback<counter> cb(source.get_token(), counter{&calls});
        source.request_stop();
    }
    if (calls != static_cast<std::uint64_t>(state.iterations())) fatal("baseline: callback lost");
}

/// Two empty lock sections per iteration: what try_pair's two sections cost without the
/// channel around them (the locked compare-and-swap of each dominates).
template <class Lock> void lock_pair_baseline(benchmark::State& state) {
    Lock lock;
    std::uint64_t sections = 0;
    for (auto _ : state) {
        for (int i = 0; i < 2; ++i) {
            lock.lock();
            ++sections;
            benchmark::ClobberMemory(); // the sections stay apart, each with its store
            lock.unlock();
        }
    }
    if (sections != 2 * static_cast<std::uint64_t>(state.iterations())) {
        fatal("baseline: a section was lost");
    }
}

/// A lock shared by the threads of micro/lock_contended/<sleep> (one per instantiation).
template <class Sleep> struct contended {
    static inline cochan::detail::basic_channel_lock<Sleep> lock;
    static inline std::uint64_t sections = 0; // guarded by lock
};

/// micro/lock_contended/<sleep>, run by 4 threads at once: sections of 32 increments of a
/// shared counter, so holders are preempted inside and waiters spin, mark and sleep.
template <class Sleep> void lock_contended(benchmark::State& state) {
    using shared = contended<Sleep>;
    if (state.thread_index() == 0) shared::sections = 0;
    std::uint64_t mine = 0;
    for (auto _ : state) {
        shared::lock.lock();
        for (int i = 0; i < 32; ++i) {
            ++shared::sections;
            benchmark::ClobberMemory();
        }
        shared::lock.unlock();
        ++mine;
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(mine));
    if (mine != static_cast<std::uint64_t>(state.iterations())) fatal("lock: a section lost");
}

} // namespace

int main(int argc, char** argv) {
    using benchmark::RegisterBenchmark;
    RegisterBenchmark("micro/try_pair/spmc/bounded", try_pair<false, true>);
    RegisterBenchmark("micro/try_pair/spmc/unbounded", try_pair<false, false>);
    RegisterBenchmark("micro/try_pair/mpmc/bounded", try_pair<true, true>);
    RegisterBenchmark("micro/try_pair/mpmc/unbounded", try_pair<true, false>);
    RegisterBenchmark("micro/handoff/spmc/bounded", handoff<false, true, 1>);
    RegisterBenchmark("micro/handoff/spmc/unbounded", handoff<false, false, 1>);
    RegisterBenchmark("micro/handoff/mpmc/bounded", handoff<true, true, 1>);
    RegisterBenchmark("micro/handoff/mpmc/unbounded", handoff<true, false, 1>);
    RegisterBenchmark("micro/wake_one_of_8/spmc/bounded", handoff<false, true, 8>);
    RegisterBenchmark("micro/wake_one_of_8/mpmc/bounded", handoff<true, true, 8>);
    RegisterBenchmark("micro/cancel_recv/spmc", cancel_recv<false>);
    RegisterBenchmark("micro/cancel_recv/mpmc", cancel_recv<true>);
    RegisterBenchmark("micro/recv_buffered/none", recv_buffered<false>);
    RegisterBenchmark("micro/recv_buffered/token", recv_buffered<true>);
    RegisterBenchmark("micro/stop_token_baseline", stop_token_baseline);
    RegisterBenchmark("micro/lock_pair_baseline", lock_pair_baseline<cochan::detail::channel_lock>);
#if COCHAN_DETAIL_HAS_ATOMIC_SLEEP
    // The same with the release of the platforms whose sleeps have no time limit (an exchange).
    RegisterBenchmark(
        "micro/lock_pair_baseline/atomic_wait",
        lock_pair_baseline<cochan::detail::basic_channel_lock<cochan::detail::atomic_sleep>>);
#endif
    RegisterBenchmark("micro/lock_contended/table", lock_contended<cochan::detail::table_sleep>)
        ->Threads(4)
        ->UseRealTime();
#if COCHAN_DETAIL_HAS_ATOMIC_SLEEP
    RegisterBenchmark("micro/lock_contended/atomic_wait",
                      lock_contended<cochan::detail::atomic_sleep>)
        ->Threads(4)
        ->UseRealTime();
#endif
#if defined(__linux__)
    RegisterBenchmark("micro/lock_contended/futex", lock_contended<cochan::detail::futex_sleep>)
        ->Threads(4)
        ->UseRealTime();
#endif
    micro::register_blocking(); // blocking_buffered, blocking_pingpong, mutex_cv_pingpong
    return bench::run_main(argc, argv);
}
