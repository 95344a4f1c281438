// The blocking API: threads and coroutines on the same channel, one FIFO, stop tokens and
// disconnection while threads wait.
#include <cochan/cochan.hpp>

#include "support/manual_scheduler.hpp"
#include "support/task.hpp"
#include "support/thread_pool.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

using namespace cochan_test;
using namespace std::chrono_literals;

TEST_CASE("blocking: a thread producer feeds coroutine consumers",
          "[blocking][threads][exactly-once][fifo][thread-safety]") {
    constexpr std::uint64_t n = 4096;
    auto [tx, rx] = cochan::spmc::bounded<std::uint64_t>(8);
    thread_pool pool(2);
    completion_latch done(4);
    std::vector<std::vector<std::uint64_t>> got(4);
    for (auto& g : got) {
        [](thread_pool& pool, auto rx, std::vector<std::uint64_t>& got,
           completion_latch& done) -> detached {
            co_await pool.schedule();
            while (auto r = co_await rx.recv().resume_on(pool.executor())) got.push_back(*r);
            done.count_down();
        }(pool, rx, g, done);
    }
    { auto drop = std::move(rx); }
    std::thread producer([tx = std::move(tx)]() mutable {
        for (std::uint64_t i = 0; i < n; ++i) {
            if (!tx.blocking_send(i)) std::abort();
        }
    });
    producer.join(); // the sender is destroyed with the thread's lambda: consumers drain
    REQUIRE(done.wait_for(60s));
    std::vector<std::uint64_t> all;
    for (auto& g : got) {
        CHECK(std::is_sorted(g.begin(), g.end()));
        all.insert(all.end(), g.begin(), g.end());
    }
    std::sort(all.begin(), all.end());
    REQUIRE(all.size() == n);
    for (std::uint64_t i = 0; i < n; ++i) REQUIRE(all[i] == i);
}

TEST_CASE("blocking: a coroutine producer feeds thread consumers",
          "[blocking][threads][exactly-once][fifo][thread-safety]") {
    constexpr std::uint64_t n = 4096;
    auto [tx, rx] = cochan::mpmc::bounded<std::uint64_t>(4);
    std::vector<std::vector<std::uint64_t>> got(4);
    std::vector<std::thread> consumers;
    consumers.reserve(got.size());
    for (auto& g : got) {
        consumers.emplace_back([rx = rx, &g] {
            while (auto r = rx.blocking_recv()) g.push_back(*r);
        });
    }
    { auto drop = std::move(rx); }
    thread_pool pool(1);
    completion_latch done(1);
    [](thread_pool& pool, auto tx, std::uint64_t n, completion_latch& done) -> detached {
        co_await pool.schedule();
        for (std::uint64_t i = 0; i < n; ++i) {
            auto r = co_await tx.send(i).resume_on(pool.executor());
            if (!r) std::abort();
        }
        tx.close();
        done.count_down();
    }(pool, std::move(tx), n, done);
    REQUIRE(done.wait_for(60s));
    for (auto& t : consumers) t.join();
    std::vector<std::uint64_t> all;
    for (auto& g : got) {
        CHECK(std::is_sorted(g.begin(), g.end()));
        all.insert(all.end(), g.begin(), g.end());
    }
    std::sort(all.begin(), all.end());
    REQUIRE(all.size() == n);
    for (std::uint64_t i = 0; i < n; ++i) REQUIRE(all[i] == i);
}

TEST_CASE("blocking: threads and coroutines wait in one FIFO", "[blocking][fifo]") {
    auto channel = cochan::spmc::unbounded<int>();
    auto& tx = channel.first;
    auto& rx = channel.second;
    manual_scheduler sched;
    auto first = [](auto& rx, manual_scheduler& s) -> task<int> {
        auto r = co_await rx.recv().resume_on(s.executor());
        co_return *r;
    }(rx, sched);

    std::atomic<int> thread_got{-1};
    std::thread blocked([&] { thread_got = *rx.blocking_recv(); });

    // The thread queues behind the coroutine. Until it is blocked, a send would go to the
    // coroutine anyway; send 1 now (to the coroutine), then 2 must reach the thread.
    REQUIRE(tx.send(1));
    CHECK(sched.run_all() == 1);
    REQUIRE(first.done());
    CHECK(first.result() == 1);
    REQUIRE(tx.send(2));
    blocked.join();
    CHECK(thread_got == 2);
}

TEST_CASE("blocking: disconnection wakes every blocked thread",
          "[blocking][last-sender-gone][last-receiver-gone]") {
    auto [tx, rx] = cochan::spmc::unbounded<int>();
    std::atomic<int> disconnected{0};
    std::vector<std::thread> threads;
    threads.reserve(4);
    // Threads that block before close() are woken by it; the others see the disconnection at
    // once. Both must report `disconnected` exactly once each.
    for (int i = 0; i < 4; ++i) {
        threads.emplace_back([&, rx = rx] {
            auto r = rx.blocking_recv();
            if (!r && r.error() == cochan::recv_errc::disconnected) ++disconnected;
        });
    }
    tx.close();
    for (auto& t : threads) t.join();
    CHECK(disconnected == 4);

    auto bounded = cochan::spmc::bounded<int>(1); // not a structured binding: captured below
    auto& btx = bounded.first;
    auto& brx = bounded.second;
    REQUIRE(btx.try_send(1));
    std::atomic<int> returned{-1};
    std::thread sender([&, tx = std::move(btx)]() mutable {
        auto r = tx.blocking_send(2);
        returned = r ? -2 : r.error().value;
    });
    // Whether the sender has blocked yet or not, dropping the last receiver must fail its send
    // with the value back: woken if blocked, refused if not (the threads decide the order).
    { auto last = std::move(brx); }
    sender.join();
    CHECK(returned == 2);
}

TEST_CASE("blocking: ping-pong between two threads", "[blocking][threads][thread-safety]") {
    auto [atx, arx] = cochan::spmc::bounded<int>(1);
    auto [btx, brx] = cochan::spmc::bounded<int>(1);
    constexpr int rounds = 20000;
    std::thread pong([rx = std::move(arx), tx = std::move(btx)]() mutable {
        while (auto r = rx.blocking_recv()) {
            if (!tx.blocking_send(*r + 1)) return;
        }
    });
    int value = 0;
    for (int i = 0; i < rounds; ++i) {
        REQUIRE(atx.blocking_send(value));
        auto r = brx.blocking_recv();
        REQUIRE(r);
        value = *r;
    }
    atx.close();
    pong.join();
    CHECK(value == rounds);
}
