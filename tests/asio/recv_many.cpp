// async_recv_many and async_recv_many_ec: batches from Asio code. What is buffered comes in one
// completion (up to max), a waiting operation completes with the value it waited for and what
// arrived meanwhile, errors append nothing, and a late cancellation hands the value back.
#if COCHAN_TEST_BOOST_ASIO
#include <cochan/boost_asio.hpp>
#else
#include <cochan/asio.hpp>
#endif

#include "support/asio_flavour.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

using adapter::async_recv_many;
using adapter::async_recv_many_ec;

namespace {
/// `h` runs on `io`.
template <class H> auto on(asio::io_context& io, H h) {
    return asio::bind_executor(io, std::move(h));
}
} // namespace

TEST_CASE("asio recv_many: a callback gets what is buffered, up to max, oldest first",
          "[asio][recv_many][batches]") {
    asio::io_context io;
    auto [tx, rx] = cochan::spmc::bounded<int>(8);
    for (int i = 1; i <= 5; ++i) REQUIRE(tx.try_send(i));
    std::vector<int> out;
    std::optional<cochan::recv_result<std::size_t>> got;
    async_recv_many(rx, out, 3,
                    on(io, [&](const cochan::recv_result<std::size_t>& r) { got = r; }));
    CHECK_FALSE(got); // never inside the initiating function
    io.run();
    REQUIRE(got);
    REQUIRE(*got);
    CHECK(**got == 3);
    CHECK(out == std::vector<int>{1, 2, 3});
    CHECK(rx.size() == 2);
}

TEST_CASE("asio recv_many: a waiting operation completes with its value and what came meanwhile",
          "[asio][recv_many][batches]") {
    asio::io_context io;
    auto [tx, rx] = cochan::mpmc::unbounded<int>();
    std::vector<int> out;
    std::optional<std::size_t> count;
    async_recv_many_ec(rx, out, 10,
                       on(io, [&](adapter::error_code ec, std::size_t n) { count = ec ? 0 : n; }));
    REQUIRE(io.poll() == 0); // it waits
    REQUIRE(tx.send(7));     // granted to the waiting operation
    REQUIRE(tx.send(8));     // buffered before its completion runs: taken with it
    REQUIRE(tx.send(9));
    io.run();
    CHECK(count == 3);
    CHECK(out == std::vector<int>{7, 8, 9});
}

TEST_CASE("asio recv_many: disconnected and cancelled append nothing; a late cancellation "
          "hands the value back",
          "[asio][recv_many][batches][cancellation-hand-off][last-sender-gone]") {
    asio::io_context io;
    {
        auto [tx, rx] = cochan::spmc::bounded<int>(2);
        tx.close();
        std::vector<int> out;
        adapter::error_code code;
        async_recv_many_ec(rx, out, 4, on(io, [&](adapter::error_code ec, std::size_t n) {
                               code = ec;
                               CHECK(n == 0);
                           }));
        io.run();
        io.restart();
        CHECK(code == cochan::recv_errc::disconnected);
        CHECK(out.empty());
    }
    {
        auto [tx, rx] = cochan::spmc::bounded<int>(2);
        std::vector<int> out;
        asio::cancellation_signal signal;
        std::optional<cochan::recv_result<std::size_t>> got;
        async_recv_many(rx, out, 4,
                        asio::bind_cancellation_slot(
                            signal.slot(),
                            on(io, [&](const cochan::recv_result<std::size_t>& r) { got = r; })));
        REQUIRE(tx.try_send(1)); // granted to the operation, whose completion is queued
        signal.emit(asio::cancellation_type::terminal); // before the completion runs
        io.run();
        io.restart();
        REQUIRE(got);
        CHECK(got->error() == cochan::recv_errc::cancelled);
        CHECK(out.empty());
        CHECK(*rx.try_recv() == 1); // back in the channel
    }
}

TEST_CASE("asio recv_many: use_awaitable and deferred", "[asio][recv_many][batches]") {
    asio::io_context io;
    auto [tx, rx] = cochan::spmc::bounded<int>(4);
    for (int i = 1; i <= 4; ++i) REQUIRE(tx.try_send(i));
    std::vector<int> out;
    std::size_t first = 0;
    std::size_t second = 0;
    asio::co_spawn(
        io,
        [&rx = rx, &out, &first, &second]() -> asio::awaitable<void> {
            auto r = co_await async_recv_many(rx, out, 3, asio::use_awaitable); // inline
            first = r ? *r : 0;
            auto [ec, n] =
                co_await async_recv_many_ec(rx, out, 3, cochan_test::as_tuple(asio::use_awaitable));
            second = ec ? 0 : n;
        },
        asio::detached);
    io.run();
    io.restart();
    CHECK(first == 3);
    CHECK(second == 1);
    CHECK(out == std::vector<int>{1, 2, 3, 4});

    auto later = async_recv_many(rx, out, 2, cochan_test::deferred);
    REQUIRE(tx.try_send(5));
    std::optional<cochan::recv_result<std::size_t>> got;
    std::move(later)(on(io, [&](const cochan::recv_result<std::size_t>& r) { got = r; }));
    io.run();
    REQUIRE(got);
    CHECK(**got == 1);
    CHECK(out.back() == 5);
}
