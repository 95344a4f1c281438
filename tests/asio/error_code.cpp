// The adapter by Asio's completion conventions: async_recv_ec completes with
// void(error_code, T), async_send_ec with void(error_code, std::optional<T>) (the unsent value
// on failure). Each completion token an Asio user reaches for: plain callbacks, use_awaitable
// (throws system_error), as_tuple, redirect_error, use_future, deferred, and || from
// awaitable_operators (lossless against a timer).
#if COCHAN_TEST_BOOST_ASIO
#include <cochan/boost_asio.hpp>
#else
#include <cochan/asio.hpp>
#endif

#include "support/asio_flavour.hpp"
#include "support/counted.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

using adapter::async_recv_ec;
using adapter::async_send_ec;
using error_code = adapter::error_code;
using cochan_test::counted;

namespace {

/// Runs `body` as a coroutine on `io` to completion, rethrowing what escapes it.
template <class F> void run_coroutine(asio::io_context& io, F body) {
    std::exception_ptr failure;
    asio::co_spawn(io, std::move(body), [&](std::exception_ptr e) { failure = std::move(e); });
    io.restart(); // `io` may have run before
    io.run();
    if (failure) std::rethrow_exception(failure);
}

struct no_default {
    explicit no_default(int) {}
};

template <class Rx>
concept can_recv_ec = requires(const Rx& rx) {
    async_recv_ec(rx, asio::detached);
};
template <class Rx>
concept can_recv = requires(const Rx& rx) {
    adapter::async_recv(rx, asio::detached);
};
template <class Tx>
concept can_send_ec = requires(Tx& tx, typename Tx::value_type v) {
    async_send_ec(tx, std::move(v), asio::detached);
};

} // namespace

TEST_CASE("asio ec: the error_code is the flavour's own, holding cochan's codes", "[asio]") {
#if COCHAN_TEST_BOOST_ASIO
    STATIC_REQUIRE(std::is_same_v<error_code, boost::system::error_code>);
    STATIC_REQUIRE(boost::system::is_error_code_enum<cochan::recv_errc>::value);
    STATIC_REQUIRE(boost::system::is_error_code_enum<cochan::send_errc>::value);
#else
    STATIC_REQUIRE(std::is_same_v<error_code, std::error_code>);
#endif
    error_code ec = cochan::recv_errc::cancelled;
    CHECK(ec);
    CHECK(ec == cochan::recv_errc::cancelled);
    CHECK(ec != cochan::send_errc::cancelled);
    CHECK(ec == std::errc::operation_canceled);
    CHECK(ec.message() == cochan::to_string(cochan::recv_errc::cancelled));
    // The same code as the standard one: converting keeps cochan's category.
    std::error_code std_ec = ec;
    CHECK(&std_ec.category() == &cochan::recv_category());
    CHECK(std_ec == cochan::recv_errc::cancelled);
}

TEST_CASE("asio ec: async_recv_ec needs a default-initializable T; async_recv does not", "[asio]") {
    STATIC_REQUIRE(can_recv_ec<cochan::spmc::bounded_receiver<int>>);
    STATIC_REQUIRE_FALSE(can_recv_ec<cochan::spmc::bounded_receiver<no_default>>);
    STATIC_REQUIRE(can_recv<cochan::spmc::bounded_receiver<no_default>>);
    // A send hands its value back in an optional, so any T works.
    STATIC_REQUIRE(can_send_ec<cochan::spmc::bounded_sender<no_default>>);
}

TEST_CASE("asio ec: plain callbacks get (error_code, T) and (error_code, optional<T>)",
          "[asio][last-receiver-gone][last-sender-gone]") {
    asio::io_context io;
    auto channel = cochan::mpmc::bounded<std::unique_ptr<int>>(
        1); // clang 14 cannot capture structured bindings
    auto& tx = channel.first;
    auto& rx = channel.second;
    std::vector<std::pair<error_code, std::unique_ptr<int>>> received;
    std::vector<std::pair<error_code, std::optional<std::unique_ptr<int>>>> sent;
    auto on_recv = [&](error_code ec, std::unique_ptr<int> v) {
        received.emplace_back(ec, std::move(v));
    };
    auto on_send = [&](error_code ec, std::optional<std::unique_ptr<int>> back) {
        sent.emplace_back(ec, std::move(back));
    };
    async_send_ec(tx, std::make_unique<int>(1), asio::bind_executor(io, on_send)); // buffered
    async_send_ec(tx, std::make_unique<int>(2), asio::bind_executor(io, on_send)); // waits
    async_recv_ec(rx, asio::bind_executor(io, on_recv));
    CHECK(sent.empty()); // never inside the initiating function
    CHECK(received.empty());
    io.run();
    REQUIRE(sent.size() == 2);
    for (auto& [ec, back] : sent) {
        CHECK_FALSE(ec);
        CHECK_FALSE(back.has_value()); // nothing handed back: the value is in the channel
    }
    REQUIRE(received.size() == 1);
    CHECK_FALSE(received[0].first);
    REQUIRE(received[0].second);
    CHECK(*received[0].second == 1);

    // Every receiver gone: the send fails and the optional hands the value back.
    auto rx2 = rx; // keeps 2 for the receive below
    { auto gone = std::move(rx); }
    async_recv_ec(rx2, asio::bind_executor(io, on_recv)); // takes 2
    { auto last = std::move(rx2); }
    async_send_ec(tx, std::make_unique<int>(3), asio::bind_executor(io, on_send));
    io.restart();
    io.run();
    REQUIRE(received.size() == 2);
    CHECK(*received[1].second == 2);
    REQUIRE(sent.size() == 3);
    CHECK(sent[2].first == cochan::send_errc::disconnected);
    REQUIRE(sent[2].second.has_value());
    REQUIRE(*sent[2].second);
    CHECK(**sent[2].second == 3);

    // Every sender gone and the buffer drained: the receive reports disconnected and T().
    auto [tx3, rx3] = cochan::spmc::unbounded<std::string>();
    REQUIRE(tx3.send("last"));
    { auto gone = std::move(tx3); }
    std::vector<std::pair<error_code, std::string>> strings;
    for (int i = 0; i < 2; ++i) {
        async_recv_ec(rx3, asio::bind_executor(io, [&](error_code ec, std::string s) {
                          strings.emplace_back(ec, std::move(s));
                      }));
    }
    io.restart();
    io.run();
    REQUIRE(strings.size() == 2);
    CHECK_FALSE(strings[0].first);
    CHECK(strings[0].second == "last");
    CHECK(strings[1].first == cochan::recv_errc::disconnected);
    CHECK(strings[1].second.empty());
}

TEST_CASE("asio ec: use_awaitable returns the value and throws system_error on error", "[asio]") {
    asio::io_context io;
    auto channel = cochan::spmc::bounded<int>(1); // clang 14 cannot capture structured bindings
    auto& tx = channel.first;
    auto& rx = channel.second;
    int got = 0;
    std::optional<error_code> recv_error, send_error;
    run_coroutine(io, [&]() -> asio::awaitable<void> {
        std::optional<int> back = co_await async_send_ec(tx, 5, asio::use_awaitable);
        CHECK_FALSE(back.has_value());
        got = co_await async_recv_ec(rx, asio::use_awaitable);
        tx.close();
        try {
            (void)co_await async_recv_ec(rx, asio::use_awaitable);
        } catch (const cochan_test::system_error& e) {
            recv_error = e.code();
        }
        try {
            (void)co_await async_send_ec(tx, 6, asio::use_awaitable);
        } catch (const cochan_test::system_error& e) {
            send_error = e.code();
        }
    });
    CHECK(got == 5);
    REQUIRE(recv_error);
    CHECK(*recv_error == cochan::recv_errc::disconnected);
    REQUIRE(send_error);
    CHECK(*send_error == cochan::send_errc::disconnected); // a closed sender
}

TEST_CASE("asio ec: as_tuple(use_awaitable) gives the code and the value, or the value back",
          "[asio]") {
    asio::io_context io;
    auto channel = cochan::mpmc::bounded<std::string>(1);
    auto& tx = channel.first;
    auto& rx = channel.second;
    run_coroutine(io, [&]() -> asio::awaitable<void> {
        constexpr auto token = cochan_test::as_tuple(asio::use_awaitable);
        auto [sent_ec, back] = co_await async_send_ec(tx, std::string("job"), token);
        CHECK_FALSE(sent_ec);
        CHECK_FALSE(back);
        auto [ec, job] = co_await async_recv_ec(rx, token);
        STATIC_REQUIRE(std::is_same_v<decltype(job), std::string>);
        CHECK_FALSE(ec);
        CHECK(job == "job");
        { auto gone = std::move(rx); } // the last receiver
        auto [failed_ec, unsent] = co_await async_send_ec(tx, std::string("lost?"), token);
        CHECK(failed_ec == cochan::send_errc::disconnected);
        REQUIRE(unsent);
        CHECK(*unsent == "lost?"); // no: handed back
    });
}

TEST_CASE("asio ec: redirect_error(use_awaitable, ec) stores the code instead of throwing",
          "[asio]") {
    asio::io_context io;
    auto channel = cochan::spmc::bounded<int>(2); // clang 14 cannot capture structured bindings
    auto& tx = channel.first;
    auto& rx = channel.second;
    run_coroutine(io, [&]() -> asio::awaitable<void> {
        error_code ec;
        auto back = co_await async_send_ec(tx, 7, asio::redirect_error(asio::use_awaitable, ec));
        CHECK_FALSE(ec);
        CHECK_FALSE(back);
        int v = co_await async_recv_ec(rx, asio::redirect_error(asio::use_awaitable, ec));
        CHECK_FALSE(ec);
        CHECK(v == 7);
        tx.close();
        v = co_await async_recv_ec(rx, asio::redirect_error(asio::use_awaitable, ec));
        CHECK(ec == cochan::recv_errc::disconnected);
        CHECK(v == 0);
    });
}

TEST_CASE("asio ec: use_future delivers the value, and the error as an exception", "[asio]") {
    // Unbound, use_future's completion runs on asio::system_executor's threads, and get() waits
    // for it.
    auto [tx, rx] = cochan::mpmc::bounded<int>(1);
    std::future<std::optional<int>> sent = async_send_ec(tx, 9, asio::use_future);
    CHECK_FALSE(sent.get().has_value());
    std::future<int> got = async_recv_ec(rx, asio::use_future);
    CHECK(got.get() == 9);
    // Bound to an io_context, it completes where that runs: here, on this thread. (Not on the
    // system executor: ThreadSanitizer cannot see libstdc++'s exception_ptr reference count,
    // and would report the exception handed across threads as a race.)
    { auto gone = std::move(tx); }
    asio::io_context io;
    std::future<int> ended = async_recv_ec(rx, asio::bind_executor(io, asio::use_future));
    io.run();
    try {
        (void)ended.get();
        FAIL("get() did not throw");
    } catch (const cochan_test::system_error& e) {
        CHECK(e.code() == cochan::recv_errc::disconnected);
    }
}

TEST_CASE("asio ec: deferred operations launch later, with any token", "[asio]") {
    asio::io_context io;
    auto channel = cochan::mpmc::bounded<int>(2); // clang 14 cannot capture structured bindings
    auto& tx = channel.first;
    auto& rx = channel.second;
    auto send = async_send_ec(tx, 11, cochan_test::deferred);
    auto recv = async_recv_ec(rx, cochan_test::deferred);
    CHECK(rx.empty()); // nothing started yet
    std::optional<std::pair<error_code, int>> got;
    std::move(recv)(asio::bind_executor(io, [&](error_code ec, int v) { got.emplace(ec, v); }));
    std::move(send)(asio::bind_executor(io, [](error_code ec, std::optional<int> back) {
        CHECK_FALSE(ec);
        CHECK_FALSE(back);
    }));
    io.run();
    REQUIRE(got);
    CHECK_FALSE(got->first);
    CHECK(got->second == 11);
    // And awaited: a deferred operation is itself awaitable through use_awaitable.
    REQUIRE(tx.try_send(12));
    int awaited = 0;
    run_coroutine(io, [&]() -> asio::awaitable<void> {
        awaited = co_await async_recv_ec(rx, cochan_test::deferred)(asio::use_awaitable);
    });
    CHECK(awaited == 12);
}

TEST_CASE("asio ec: cancelling a waiting send hands its value back beside operation_canceled",
          "[asio][cancellation-hand-off]") {
    asio::io_context io;
    auto channel = cochan::spmc::bounded<counted>(1); // clang 14 cannot capture structured bindings
    auto& tx = channel.first;
    auto& rx = channel.second;
    counted::reset();
    REQUIRE(tx.try_send(counted(1)));
    asio::cancellation_signal signal;
    std::optional<std::pair<error_code, std::optional<counted>>> result;
    async_send_ec(
        tx, counted(2),
        asio::bind_cancellation_slot(
            signal.slot(), asio::bind_executor(io, [&](error_code ec, std::optional<counted> back) {
                result.emplace(ec, std::move(back));
            })));
    io.poll();
    CHECK_FALSE(result); // waiting: the channel is full
    signal.emit(asio::cancellation_type::terminal);
    io.run();
    REQUIRE(result);
    CHECK(result->first == cochan::send_errc::cancelled);
    CHECK(result->first == std::errc::operation_canceled);
    REQUIRE(result->second);
    CHECK(result->second->value == 2);
    CHECK(rx.size() == 1); // only the first value is in the channel
}

TEST_CASE("asio ec: async_recv_ec || timer with use_awaitable loses no value",
          "[asio][exactly-once][cancellation-hand-off][fifo]") {
    using namespace asio::experimental::awaitable_operators;
    constexpr int n = 1000;
    asio::io_context io;
    auto channel = cochan::spmc::unbounded<int>(); // not a structured binding: captured below
    auto& tx = channel.first;
    auto& rx = channel.second;
    std::vector<int> received;
    int timeouts = 0;
    auto consumer = [&]() -> asio::awaitable<void> {
        asio::steady_timer timer(io);
        std::mt19937 rng(7);
        // A receive that fails (cancelled after the timer won) throws inside ||, which then
        // reports the timer: no error reaches this loop, and nothing is lost in between.
        while (received.size() < static_cast<std::size_t>(n)) {
            timer.expires_after(std::chrono::microseconds(rng() % 40));
            auto result = co_await (async_recv_ec(rx, asio::use_awaitable) ||
                                    timer.async_wait(asio::use_awaitable));
            if (result.index() == 1) {
                ++timeouts;
            } else {
                received.push_back(std::get<0>(result));
            }
        }
    };
    auto producer = [&]() -> asio::awaitable<void> {
        asio::steady_timer timer(io);
        std::mt19937 rng(11);
        for (int i = 0; i < n; ++i) {
            REQUIRE(tx.send(i));
            timer.expires_after(std::chrono::microseconds(rng() % 40));
            co_await timer.async_wait(asio::use_awaitable);
        }
    };
    asio::co_spawn(io, consumer(), asio::detached);
    asio::co_spawn(io, producer(), asio::detached);
    io.run();
    CHECK(timeouts > 0); // the race was really run
    REQUIRE(received.size() == static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) REQUIRE(received[static_cast<std::size_t>(i)] == i);
    CHECK(rx.empty());
}

TEST_CASE("asio ec: as_tuple(use_awaitable) || timer on a strand of a threaded io_context loses "
          "no value",
          "[asio][exactly-once][cancellation-hand-off][fifo]") {
    using namespace asio::experimental::awaitable_operators;
    constexpr int n = 1000;
    asio::io_context io;
    auto strand = asio::make_strand(io);
    auto channel = cochan::mpmc::bounded<int>(4);
    auto& tx = channel.first;
    auto& rx = channel.second;
    std::vector<int> received;
    auto consumer = [&]() -> asio::awaitable<void> {
        asio::steady_timer timer(strand);
        constexpr auto token = cochan_test::as_tuple(asio::use_awaitable);
        for (;;) {
            timer.expires_after(std::chrono::microseconds(20));
            auto result = co_await (async_recv_ec(rx, token) || timer.async_wait(token));
            if (result.index() == 1) continue; // the timer won: any granted value went back
            auto [ec, v] = std::get<0>(result);
            if (ec == cochan::recv_errc::disconnected) co_return;
            if (!ec) received.push_back(v);
        }
    };
    auto producer = [&]() -> asio::awaitable<void> {
        for (int i = 0; i < n; ++i) {
            auto [ec, back] =
                co_await async_send_ec(tx, i, cochan_test::as_tuple(asio::use_awaitable));
            REQUIRE_FALSE(ec);
        }
        tx.close();
    };
    asio::co_spawn(strand, consumer(), asio::detached); // the race runs on the strand
    asio::co_spawn(io, producer(), asio::detached);     // the producer on any thread
    std::thread second([&] { io.run(); });
    io.run();
    second.join();
    REQUIRE(received.size() == static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) REQUIRE(received[static_cast<std::size_t>(i)] == i);
}

TEST_CASE("asio ec: a coroutine suspended in async_recv_ec at io_context destruction is "
          "destroyed, its granted value handed back",
          "[asio][lifetime][exactly-once]") {
    counted::reset();
    auto [tx, rx] = cochan::mpmc::bounded<counted>(1);
    int resumed = 0;
    {
        asio::io_context io;
        asio::co_spawn(
            io,
            [&resumed, rx = rx]() -> asio::awaitable<void> {
                counted v = co_await async_recv_ec(rx, asio::use_awaitable);
                ++resumed; // never: the io_context does not run again
            },
            asio::detached);
        io.poll();                         // the coroutine runs to its wait
        REQUIRE(tx.try_send(counted(10))); // granted; its completion stays queued
    }
    CHECK(resumed == 0);
    CHECK(counted::live() == 1); // the frame is gone; the value is back in the channel
    auto r = rx.try_recv();
    REQUIRE(r);
    CHECK(r->value == 10);
}
