// micro_bench's blocking cases (main.cpp lists every case): blocking_buffered,
// blocking_pingpong and its reference mutex_cv_pingpong.
#include "blocking.hpp"

#include "../common/channels.hpp"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <utility>

namespace {

using bench::fatal;
using bench::has_blocking_api;
using bench::make_channel;
using bench::receiver_t;

// ---- blocking calls that do not wait --------------------------------------------------------

template <bool WithToken> void blocking_buffered(benchmark::State& state) {
    auto [tx, rx] = make_channel<false, true>();
    std::stop_source source; // never stopped: its token only makes a stop possible
    const std::stop_token token = WithToken ? source.get_token() : std::stop_token{};
    std::uint64_t v = 0;
    std::uint64_t sum = 0;
    for (auto _ : state) {
        if (!tx.blocking_send(++v, token)) fatal("blocking_buffered: blocking_send failed");
        auto r = rx.blocking_recv(token);
        if (!r) fatal("blocking_buffered: the buffered value was not received");
        sum += *r;
    }
    if (sum != v * (v + 1) / 2) fatal("blocking_buffered: a value was lost");
}

// ---- blocking ping-pong -----------------------------------------------------------------------

template <bool Multi> void blocking_pingpong(benchmark::State& state) {
    if constexpr (has_blocking_api<receiver_t<Multi, true>>) {
        auto [ping_tx, ping_rx] = make_channel<Multi, true>(1);
        auto [pong_tx, pong_rx] = make_channel<Multi, true>(1);
        std::thread echo([rx = std::move(ping_rx), tx = std::move(pong_tx)]() mutable {
            while (auto r = rx.blocking_recv()) {
                if (!tx.blocking_send(*r)) fatal("pingpong: echo send failed");
            }
            tx.close();
        });
        std::uint64_t v = 0;
        for (auto _ : state) {
            if (!ping_tx.blocking_send(++v)) fatal("pingpong: send failed");
            auto r = pong_rx.blocking_recv();
            if (!r || *r != v) fatal("pingpong: wrong echo");
        }
        ping_tx.close();
        echo.join();
    } else {
        state.SkipWithError("cochan has no blocking API yet (blocking_recv)");
    }
}

/// One value slot guarded by a mutex and a condition variable.
class cv_slot {
  public:
    void put(std::uint64_t v) {
        {
            std::lock_guard lock(mutex_);
            value_ = v;
        }
        cv_.notify_one();
    }
    std::uint64_t take() {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return value_.has_value(); });
        const std::uint64_t v = *value_;
        value_.reset();
        return v;
    }

  private:
    std::mutex mutex_;
    std::condition_variable cv_;
    std::optional<std::uint64_t> value_; // guarded by mutex_
};

void mutex_cv_pingpong(benchmark::State& state) {
    cv_slot ping, pong;
    std::thread echo([&] {
        for (;;) {
            const std::uint64_t v = ping.take();
            if (v == 0) return;
            pong.put(v);
        }
    });
    std::uint64_t v = 0;
    for (auto _ : state) {
        ping.put(++v);
        if (pong.take() != v) fatal("mutex_cv_pingpong: wrong echo");
    }
    ping.put(0);
    echo.join();
}

} // namespace

void micro::register_blocking() {
    using benchmark::RegisterBenchmark;
    RegisterBenchmark("micro/blocking_buffered/none", blocking_buffered<false>);
    RegisterBenchmark("micro/blocking_buffered/token", blocking_buffered<true>);
    // Real time: the work is split across two threads.
    RegisterBenchmark("micro/blocking_pingpong/spmc", blocking_pingpong<false>)->UseRealTime();
    RegisterBenchmark("micro/blocking_pingpong/mpmc", blocking_pingpong<true>)->UseRealTime();
    RegisterBenchmark("micro/mutex_cv_pingpong", mutex_cv_pingpong)->UseRealTime();
}
