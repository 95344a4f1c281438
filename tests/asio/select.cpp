// async_select: cochan::select as an Asio operation. Biased choice, immediate and waiting
// completions (always posted), disconnection, lossless cancellation through the slot and in
// `||` races, the io_context destroyed with a select waiting or decided, lazy tokens, the
// error_code convention, allocation, and many selects over shared channels on two threads.
#if COCHAN_TEST_BOOST_ASIO
#include <cochan/boost_asio.hpp>
#else
#include <cochan/asio.hpp>
#endif

#include "support/asio_flavour.hpp"

#include "support/counted.hpp"
#include "support/counting_allocator.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

using adapter::async_select;
using adapter::async_select_ec;

namespace {

using select_result = cochan::recv_result<std::variant<int, std::string>>;

/// A handler on `io` that stores its result.
template <class R> auto store_in(asio::io_context& io, std::optional<R>& out) {
    return asio::bind_executor(io, [&out](R r) { out.emplace(std::move(r)); });
}

} // namespace

TEST_CASE("asio select: a value there at once completes through the executor, lowest index first",
          "[asio][select]") {
    asio::io_context io;
    auto [itx, irx] = cochan::spmc::bounded<int>(4);
    auto [stx, srx] = cochan::mpmc::unbounded<std::string>();
    std::optional<select_result> got;

    REQUIRE(stx.send("s"));
    async_select(store_in(io, got), irx, srx);
    CHECK(!got); // never inside the initiating function
    io.run();
    REQUIRE(got);
    REQUIRE(got->has_value());
    CHECK((*got)->index() == 1);
    CHECK(std::get<1>(**got) == "s");

    // Both have a value: the lowest index wins, the other value stays.
    REQUIRE(itx.try_send(1));
    REQUIRE(stx.send("t"));
    got.reset();
    io.restart();
    async_select(store_in(io, got), irx, srx);
    io.run();
    REQUIRE(got);
    REQUIRE(got->has_value());
    CHECK(std::get<0>(**got) == 1);
    CHECK(*srx.try_recv() == "t");
}

TEST_CASE("asio select: a waiting select takes the first value sent to either channel; the other "
          "channel's values go to its other receivers",
          "[asio][select]") {
    asio::io_context io;
    auto [atx, arx] = cochan::mpmc::bounded<int>(2);
    auto [btx, brx] = cochan::mpmc::bounded<int>(2);
    std::optional<cochan::recv_result<std::variant<int, int>>> got;
    std::optional<cochan::recv_result<int>> plain;

    async_select(store_in(io, got), arx, brx);
    adapter::async_recv(arx, store_in(io, plain)); // queued behind the select's branch in `a`
    io.poll();
    CHECK(!got);
    REQUIRE(btx.try_send(20)); // decides the select for branch 1
    REQUIRE(atx.try_send(10)); // the select's branch in `a` is skipped: the plain receive gets it
    io.run();
    REQUIRE(got);
    REQUIRE(got->has_value());
    CHECK((*got)->index() == 1);
    CHECK(std::get<1>(**got) == 20);
    REQUIRE(plain);
    CHECK(**plain == 10);
    CHECK(arx.try_recv().error() == cochan::recv_errc::empty);
}

TEST_CASE("asio select: disconnected only when every channel has ended",
          "[asio][select][last-sender-gone]") {
    asio::io_context io;
    auto [atx, arx] = cochan::spmc::bounded<int>(1);
    auto [btx, brx] = cochan::spmc::unbounded<int>();
    std::optional<cochan::recv_result<std::variant<int, int>>> got;

    async_select(store_in(io, got), arx, brx);
    io.poll();
    atx.close(); // one branch ends; the select keeps waiting on the other
    io.poll();
    CHECK(!got);
    REQUIRE(btx.send(5));
    io.run();
    REQUIRE(got);
    REQUIRE(got->has_value());
    CHECK(std::get<1>(**got) == 5);

    got.reset();
    io.restart();
    async_select(store_in(io, got), arx, brx);
    io.poll();
    CHECK(!got);
    btx.close(); // the last branch ends while the select waits
    io.run();
    REQUIRE(got);
    CHECK(got->error() == cochan::recv_errc::disconnected);

    got.reset();
    io.restart();
    async_select(store_in(io, got), arx, brx); // both ended before it starts
    io.run();
    REQUIRE(got);
    CHECK(got->error() == cochan::recv_errc::disconnected);
}

TEST_CASE("asio select: the slot cancels a waiting select, and its branches take nothing",
          "[asio][select][cancellation-hand-off]") {
    for (auto type : {asio::cancellation_type::terminal, asio::cancellation_type::partial,
                      asio::cancellation_type::total}) {
        asio::io_context io;
        auto [atx, arx] = cochan::spmc::bounded<int>(1);
        auto [btx, brx] = cochan::spmc::bounded<int>(1);
        asio::cancellation_signal signal;
        std::optional<cochan::recv_result<std::variant<int, int>>> got;
        async_select(asio::bind_cancellation_slot(signal.slot(), store_in(io, got)), arx, brx);
        io.poll();
        signal.emit(type);
        REQUIRE(atx.try_send(1));
        REQUIRE(btx.try_send(2));
        io.run();
        REQUIRE(got);
        CHECK(got->error() == cochan::recv_errc::cancelled);
        CHECK(*arx.try_recv() == 1); // both values stayed in their channels
        CHECK(*brx.try_recv() == 2);
    }
}

TEST_CASE("asio select: cancelled after it was decided but before its handler ran, it hands the "
          "value back to the head of its channel with its slot",
          "[asio][select][cancellation-hand-off][capacity]") {
    asio::io_context io;
    auto [atx, arx] = cochan::spmc::bounded<int>(1);
    auto [btx, brx] = cochan::spmc::bounded<int>(1);
    asio::cancellation_signal signal;
    std::optional<cochan::recv_result<std::variant<int, int>>> got;

    SECTION("decided by a grant while it waited") {
        async_select(asio::bind_cancellation_slot(signal.slot(), store_in(io, got)), arx, brx);
        io.poll();
        REQUIRE(btx.try_send(7)); // granted to branch 1; the completion is posted, not run
    }
    SECTION("decided at once by a buffered value") {
        REQUIRE(btx.try_send(7));
        async_select(asio::bind_cancellation_slot(signal.slot(), store_in(io, got)), arx, brx);
    }
    CHECK(!btx.try_send(8)); // the value holds its slot while it is not delivered
    signal.emit(asio::cancellation_type::terminal);
    io.run();
    REQUIRE(got);
    CHECK(got->error() == cochan::recv_errc::cancelled);
    CHECK(!btx.try_send(8)); // given back with its slot: the channel is full again
    CHECK(*brx.try_recv() == 7);
    CHECK(btx.try_send(8));
    CHECK(arx.try_recv().error() == cochan::recv_errc::empty);
}

TEST_CASE("asio select: racing async_select against a timer with || loses no value",
          "[asio][select][exactly-once][cancellation-hand-off][fifo]") {
    using namespace asio::experimental::awaitable_operators;
    constexpr int n = 1500;
    asio::io_context io;
    auto lanes = std::make_pair(cochan::spmc::bounded<int>(2), cochan::spmc::unbounded<int>());
    auto& [urgent_tx, urgent_rx] = lanes.first;
    auto& [normal_tx, normal_rx] = lanes.second;
    std::vector<int> urgent, normal;
    int timeouts = 0;
    auto consumer = [&, &urx = urgent_rx, &nrx = normal_rx]() -> asio::awaitable<void> {
        asio::steady_timer timer(io);
        std::mt19937 rng(5);
        for (;;) {
            timer.expires_after(std::chrono::microseconds(rng() % 40));
            auto raced = co_await (async_select(asio::use_awaitable, urx, nrx) ||
                                   timer.async_wait(asio::use_awaitable));
            if (raced.index() == 1) {
                ++timeouts;
                continue;
            }
            auto& r = std::get<0>(raced);
            if (!r) {
                if (r.error() == cochan::recv_errc::disconnected) co_return;
                continue; // cancelled after the decision: the value went back
            }
            if (r->index() == 0) {
                urgent.push_back(std::get<0>(*r));
            } else {
                normal.push_back(std::get<1>(*r));
            }
        }
    };
    auto producer = [&, utx = std::move(urgent_tx),
                     ntx = std::move(normal_tx)]() mutable -> asio::awaitable<void> {
        asio::steady_timer timer(io);
        std::mt19937 rng(9);
        for (int i = 0; i < n; ++i) {
            if (i % 3 == 0) {
                (void)co_await adapter::async_send(utx, i, asio::use_awaitable);
            } else {
                (void)ntx.send(i);
            }
            timer.expires_after(std::chrono::microseconds(rng() % 40));
            co_await timer.async_wait(asio::use_awaitable);
        }
        utx.close();
        ntx.close();
    };
    asio::co_spawn(io, consumer(), asio::detached);
    asio::co_spawn(io, producer(), asio::detached);
    io.run();
    CHECK(timeouts > 0); // the race was really run
    REQUIRE(urgent.size() + normal.size() == static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < urgent.size(); ++i) REQUIRE(urgent[i] == static_cast<int>(3 * i));
    for (std::size_t i = 0; i < normal.size(); ++i) {
        REQUIRE(normal[i] == static_cast<int>(i / 2 * 3 + i % 2 + 1)); // 1, 2, 4, 5, 7, ...
    }
}

TEST_CASE("asio select: an io_context destroyed with a select waiting or decided leaks nothing, "
          "runs no handler and hands the value back",
          "[asio][select][lifetime][exactly-once]") {
    cochan_test::counted::reset();
    cochan_test::handler_counts probes;
    {
        auto [atx, arx] = cochan::mpmc::bounded<cochan_test::counted>(1);
        auto [btx, brx] = cochan::mpmc::unbounded<cochan_test::counted>();
        SECTION("waiting") {
            {
                asio::io_context io;
                async_select(asio::bind_executor(io, cochan_test::counted_handler(&probes)), arx,
                             brx);
                io.poll();
            }
            REQUIRE(atx.try_send(cochan_test::counted(3))); // no branch is linked any more
            CHECK(arx.try_recv()->value == 3);
        }
        SECTION("decided by a grant, its completion queued") {
            {
                asio::io_context io;
                async_select(asio::bind_executor(io, cochan_test::counted_handler(&probes)), arx,
                             brx);
                io.poll();
                REQUIRE(atx.try_send(cochan_test::counted(4)));
            }
            CHECK(arx.try_recv()->value == 4); // back at the head of its channel, with its slot
            CHECK(atx.try_send(cochan_test::counted(5)));
        }
        SECTION("decided at once") {
            REQUIRE(btx.send(cochan_test::counted(6)));
            {
                asio::io_context io;
                async_select(asio::bind_executor(io, cochan_test::counted_handler(&probes)), arx,
                             brx);
            }
            CHECK(brx.try_recv()->value == 6);
        }
        CHECK(probes.alive == 0);
        CHECK(probes.invoked == 0);
    }
    CHECK(cochan_test::counted::live() == 0);
}

TEST_CASE("asio select: a deferred select keeps its channels alive after every endpoint is gone",
          "[asio][select][lifetime]") {
    asio::io_context io;
    std::optional<cochan::recv_result<std::variant<int, int>>> got;
    auto a = cochan::spmc::bounded<int>(1);
    auto b = cochan::spmc::bounded<int>(1);
    auto op = async_select(cochan_test::deferred, a.second, b.second);
    { auto drop = std::make_pair(std::move(a), std::move(b)); } // every endpoint is gone
    std::move(op)(store_in(io, got)); // the operation's references keep both channels
    io.run();
    REQUIRE(got); // no sender and no receiver left: both branches ended
    CHECK(got->error() == cochan::recv_errc::disconnected);
}

TEST_CASE("asio select: the error_code convention", "[asio][select]") {
    asio::io_context io;
    auto [atx, arx] = cochan::spmc::bounded<int>(1);
    auto [btx, brx] = cochan::spmc::unbounded<std::string>();
    std::vector<std::string> log;
    auto task = [&, &arx = arx, &brx = brx]() -> asio::awaitable<void> {
        auto [ec, v] =
            co_await async_select_ec(cochan_test::as_tuple(asio::use_awaitable), arx, brx);
        log.push_back(ec ? "error" : std::get<1>(v));
        adapter::error_code code;
        auto w =
            co_await async_select_ec(asio::redirect_error(asio::use_awaitable, code), arx, brx);
        log.emplace_back(code == cochan::recv_errc::disconnected && w.index() == 0 ? "disconnected"
                                                                                   : "wrong");
        try {
            co_await async_select_ec(asio::use_awaitable, arx, brx);
            log.emplace_back("no throw");
        } catch (const cochan_test::system_error& e) {
            log.emplace_back(e.code() == cochan::recv_errc::disconnected ? "thrown" : "wrong code");
        }
    };
    REQUIRE(btx.send("hello"));
    atx.close();
    asio::co_spawn(io, task(), asio::detached);
    io.poll();
    btx.close();
    io.run();
    CHECK(log == std::vector<std::string>{"hello", "disconnected", "thrown"});
}

TEST_CASE("asio select: one operation for the whole select, from the handler's allocator",
          "[asio][select]") {
    asio::io_context io;
    auto [atx, arx] = cochan::spmc::bounded<int>(1);
    auto [btx, brx] = cochan::spmc::bounded<int>(1);
    auto [ctx, crx] = cochan::spmc::bounded<int>(1);
    using allocator = cochan_test::counting_allocator<int, struct select_tag>;
    allocator::counts::reset();
    bool done = false;
    async_select(
        asio::bind_allocator(
            allocator(),
            asio::bind_executor(io,
                                [&](const cochan::recv_result<std::variant<int, int, int>>& r) {
                                    done = r.has_value();
                                })),
        arx, brx, crx);
    CHECK(allocator::counts::allocations ==
          1); // three branches, one allocation (the post adds its own)
    REQUIRE(ctx.try_send(1));
    io.run();
    CHECK(done);
}

TEST_CASE("asio select: consumers selecting over three channels on two threads receive every "
          "value exactly once",
          "[asio][select][exactly-once][thread-safety]") {
    constexpr int per_lane = 3000;
    constexpr int lanes = 3;
    asio::io_context io;
    auto c0 = cochan::mpmc::bounded<int>(4);
    auto c1 = cochan::mpmc::bounded<int>(1);
    auto c2 = cochan::mpmc::unbounded<int>();
    std::atomic<std::int64_t> sum{0};
    std::atomic<int> count{0};
    std::atomic<int> wrong{0}; // Catch2's assertions are not thread-safe: count, check at the end
    auto consumer = [&](auto r0, auto r1, auto r2) -> asio::awaitable<void> {
        for (;;) {
            auto r = co_await async_select(asio::use_awaitable, r0, r1, r2);
            if (!r) co_return;
            const int v = std::visit([](int x) { return x; }, *r);
            if (static_cast<int>(r->index()) != v % lanes) wrong.fetch_add(1); // not its lane
            sum.fetch_add(v, std::memory_order_relaxed);
            count.fetch_add(1, std::memory_order_relaxed);
        }
    };
    for (int i = 0; i < 4; ++i) {
        asio::co_spawn(io, consumer(c0.second, c1.second, c2.second), asio::detached);
    }
    {
        auto drop =
            std::make_tuple(std::move(c0.second), std::move(c1.second), std::move(c2.second));
    }
    auto send_lane = [&wrong](auto tx, int lane) {
        for (int i = 0; i < per_lane; ++i) {
            if (!tx.blocking_send(i * lanes + lane)) wrong.fetch_add(1);
        }
    };
    std::thread io2([&] { io.run(); });
    std::thread p0(send_lane, std::move(c0.first), 0);
    std::thread p1(send_lane, std::move(c1.first), 1);
    std::thread p2([&, tx = std::move(c2.first)]() mutable {
        for (int i = 0; i < per_lane; ++i) {
            if (!tx.send(i * lanes + 2)) wrong.fetch_add(1);
        }
    });
    io.run();
    p0.join();
    p1.join();
    p2.join();
    io2.join();
    constexpr std::int64_t total = static_cast<std::int64_t>(per_lane) * lanes;
    CHECK(wrong.load() == 0);
    CHECK(count.load() == total);
    CHECK(sum.load() == total * (total - 1) / 2);
}
