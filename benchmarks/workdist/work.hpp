// The work of the work-distribution benchmark: a calibrated busy loop, and the control that
// runs the same work on P OS threads with no channel (benchmarks/README.md, "Work
// distribution"). The Rust and Go peers calibrate and run the same loop the same way.
#pragma once

#include "../common/harness.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace bench::wd {

/// `iterations` steps of a 64-bit linear congruential generator started from `x`: a chain of
/// dependent multiply-adds the compiler may neither drop (the empty asm "uses" each step) nor
/// shorten. Returns the last state.
inline std::uint64_t burn(std::uint64_t iterations, std::uint64_t x) noexcept {
    for (std::uint64_t i = 0; i < iterations; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        asm volatile("" : "+r"(x));
    }
    return x;
}

/// Iterations of `burn` per microsecond on this machine: the fastest of 200 probes of 2^16
/// iterations (each about 0.1 ms), so a probe that lost its core does not count. Run once at
/// start-up.
inline double calibrate_iterations_per_us() {
    constexpr std::uint64_t probe = std::uint64_t{1} << 16;
    double best = 1e9;
    for (std::uint64_t i = 0; i < 200; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        burn(probe, i);
        const auto t1 = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    return static_cast<double>(probe) / best;
}

/// What a consumer does with each value: `iterations` of `burn` (W µs once calibrated).
struct busy_work {
    std::uint64_t iterations;
    void operator()(std::uint64_t v) const noexcept { burn(iterations, v); }
};

/// The control: P OS threads (made once, reused) each burning through its share of the items,
/// no channel. Its wall time is what the machine's cores give this work at that moment.
class control {
  public:
    explicit control(unsigned threads) : threads_(threads), gang_(threads) {}

    /// Runs `items` items of `work` split evenly over the threads; returns the wall seconds.
    double run(std::uint64_t items, busy_work work) {
        gang_.set_role([this, items, work](unsigned k) {
            for (std::uint64_t i = items * k / threads_; i < items * (k + 1) / threads_; ++i)
                work(i + 1);
        });
        const auto t0 = std::chrono::steady_clock::now();
        gang_.run("workdist control");
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }

  private:
    unsigned threads_;
    thread_gang gang_;
};

} // namespace bench::wd
