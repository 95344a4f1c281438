// The Asio adapter on a real io_context: completion-token operations, per-operation
// cancellation, lossless races against a timer, resume_on(executor), allocator and executor
// association.
#if COCHAN_TEST_BOOST_ASIO
#include <cochan/boost_asio.hpp>
#else
#include <cochan/asio.hpp>
#endif

#include "support/asio_flavour.hpp"

#include "support/counting_allocator.hpp"
#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

using adapter::async_recv;
using adapter::async_send;

namespace {

template <class Rx> asio::awaitable<void> consume(Rx rx, std::vector<std::uint64_t>& got) {
    for (;;) {
        auto r = co_await async_recv(rx, asio::use_awaitable);
        if (!r) co_return;
        got.push_back(*r);
    }
}

template <class Tx> asio::awaitable<void> produce(Tx tx, std::uint64_t n, int& failures) {
    for (std::uint64_t i = 0; i < n; ++i) {
        auto r = co_await async_send(tx, i, asio::use_awaitable);
        if (!r) ++failures;
    }
    tx.close();
}

void check_exactly_once(const std::vector<std::vector<std::uint64_t>>& got, std::uint64_t n) {
    std::vector<std::uint64_t> all;
    for (const auto& seq : got) {
        REQUIRE(std::is_sorted(seq.begin(), seq.end()));
        REQUIRE(std::adjacent_find(seq.begin(), seq.end()) == seq.end());
        all.insert(all.end(), seq.begin(), seq.end());
    }
    std::sort(all.begin(), all.end());
    REQUIRE(all.size() == n);
    for (std::uint64_t i = 0; i < n; ++i) REQUIRE(all[i] == i);
}

void run_1p8c(unsigned threads, std::size_t capacity) {
    constexpr std::uint64_t n = 4096;
    asio::io_context io;
    auto [tx, rx] = cochan::spmc::bounded<std::uint64_t>(capacity);
    std::vector<std::vector<std::uint64_t>> got(8);
    int failures = 0;
    for (auto& g : got) asio::co_spawn(io, consume(rx, g), asio::detached);
    asio::co_spawn(io, produce(std::move(tx), n, failures), asio::detached);
    { auto drop = std::move(rx); }
    std::vector<std::thread> extra;
    for (unsigned i = 1; i < threads; ++i) extra.emplace_back([&] { io.run(); });
    io.run();
    for (auto& t : extra) t.join();
    CHECK(failures == 0);
    check_exactly_once(got, n);
}

} // namespace

TEST_CASE("asio: 1P/8C awaitables on one io_context thread deliver exactly once",
          "[asio][exactly-once][fifo]") {
    run_1p8c(1, 1);
    run_1p8c(1, 64);
}

TEST_CASE("asio: 1P/8C awaitables on two io_context threads deliver exactly once",
          "[asio][exactly-once][fifo][thread-safety]") {
    run_1p8c(2, 1);
    run_1p8c(2, 64);
}

// Handlers here are bound to the io_context's executor: an unbound handler completes on
// asio::system_executor, as asio::post would.
TEST_CASE("asio: completion is posted to the handler's executor, never inline", "[asio]") {
    asio::io_context io;
    auto strand = asio::make_strand(io);
    auto [tx, rx] = cochan::mpmc::bounded<int>(4);
    REQUIRE(tx.try_send(1));
    bool called = false, on_strand = false;
    async_recv(rx, asio::bind_executor(strand, [&](cochan::recv_result<int> r) {
                   called = true;
                   on_strand = strand.running_in_this_thread();
                   CHECK(*r == 1);
               }));
    CHECK_FALSE(called); // a value was available, but the handler is not run inside the call
    io.run();
    CHECK(called);
    CHECK(on_strand);
}

TEST_CASE("asio: a waiting operation keeps the io_context running", "[asio]") {
    asio::io_context io;
    auto [tx, rx] = cochan::spmc::unbounded<int>();
    std::optional<int> got;
    async_recv(rx, asio::bind_executor(io, [&](cochan::recv_result<int> r) { got = *r; }));
    // Nothing is ready, so poll() runs out of handlers: an io_context without outstanding work
    // stops there (run() would return at once); the waiting receive's work must prevent it.
    io.poll();
    CHECK_FALSE(io.stopped());
    CHECK_FALSE(got);
    std::thread sender([&, tx = std::move(tx)]() mutable { (void)tx.send(5); });
    io.run(); // returns only after the receive completed, whether the send came before or after
    sender.join();
    REQUIRE(got);
    CHECK(*got == 5);
}

TEST_CASE("asio: the handler's cancellation slot cancels a waiting receive",
          "[asio][cancellation-hand-off]") {
    for (auto type : {asio::cancellation_type::terminal, asio::cancellation_type::partial,
                      asio::cancellation_type::total}) {
        asio::io_context io;
        auto [tx, rx] = cochan::spmc::bounded<int>(2);
        asio::cancellation_signal signal;
        std::optional<cochan::recv_result<int>> first, second;
        async_recv(rx, asio::bind_cancellation_slot(
                           signal.slot(), asio::bind_executor(io, [&](cochan::recv_result<int> r) {
                               first.emplace(std::move(r));
                           })));
        async_recv(rx, asio::bind_executor(
                           io, [&](cochan::recv_result<int> r) { second.emplace(std::move(r)); }));
        io.poll();
        signal.emit(type);
        REQUIRE(tx.try_send(7)); // goes to the second receive: the first was unlinked
        io.run();
        REQUIRE(first);
        CHECK(first->error() == cochan::recv_errc::cancelled);
        REQUIRE(second);
        CHECK(**second == 7);
    }
}

TEST_CASE("asio: cancelling a receive granted but not yet delivered hands the value back",
          "[asio][cancellation-hand-off][exactly-once]") {
    asio::io_context io;
    auto [tx, rx] = cochan::spmc::bounded<int>(1);
    asio::cancellation_signal signal;
    std::optional<cochan::recv_result<int>> got;
    async_recv(rx, asio::bind_cancellation_slot(
                       signal.slot(), asio::bind_executor(io, [&](cochan::recv_result<int> r) {
                           got.emplace(std::move(r));
                       })));
    REQUIRE(tx.try_send(3)); // granted; the completion is posted, not yet run
    signal.emit(asio::cancellation_type::terminal);
    io.run();
    REQUIRE(got);
    CHECK(got->error() == cochan::recv_errc::cancelled);
    CHECK(*rx.try_recv() == 3); // nothing lost: the value went back to the channel
}

TEST_CASE("asio: cancelling a waiting send returns its value; a granted send completes",
          "[asio][cancellation-hand-off]") {
    asio::io_context io;
    auto [tx, rx] = cochan::mpmc::bounded<int>(1);
    REQUIRE(tx.try_send(0));
    asio::cancellation_signal s1, s2;
    std::optional<cochan::send_result<int>> a, b;
    async_send(tx, 1,
               asio::bind_cancellation_slot(
                   s1.slot(), asio::bind_executor(io, [&](cochan::send_result<int> r) {
                       a.emplace(std::move(r));
                   })));
    async_send(tx, 2,
               asio::bind_cancellation_slot(
                   s2.slot(), asio::bind_executor(io, [&](cochan::send_result<int> r) {
                       b.emplace(std::move(r));
                   })));
    s1.emit(asio::cancellation_type::terminal); // still waiting: cancelled, value back
    CHECK(*rx.try_recv() == 0);                 // frees the slot: granted to the second send
    s2.emit(asio::cancellation_type::terminal); // too late: its value is in the channel
    io.run();
    REQUIRE(a);
    REQUIRE_FALSE(*a);
    CHECK(a->error().reason == cochan::send_errc::cancelled);
    CHECK(a->error().value == 1);
    REQUIRE(b);
    CHECK(b->has_value());
    CHECK(*rx.try_recv() == 2);
}

namespace {

// A completion token whose initiation launches the operation twice and passes its arguments as
// lvalues both times, as a token that retries may. Each launch completes through `on_sent`.
struct launch_twice {
    asio::io_context* io;
    int* sent;
};

} // namespace

template <class Signature> struct asio::async_result<launch_twice, Signature> {
    using return_type = void;
    template <class Initiation, class... Args>
    static void initiate(Initiation&& initiation, launch_twice token, Args&&... args) {
        auto on_sent = [sent = token.sent](const auto& r) { *sent += r ? 1 : 0; };
        initiation(asio::bind_executor(*token.io, on_sent), args...);
        initiation(asio::bind_executor(*token.io, on_sent), args...);
    }
};

TEST_CASE("bug: async_send moved its value out of an lvalue argument, so a token that launches "
          "twice sent an empty value the second time (clang-tidy)",
          "[asio]") {
    asio::io_context io;
    auto [tx, rx] = cochan::mpmc::bounded<std::string>(2);
    int sent = 0;
    async_send(tx, std::string(40, 'x'), launch_twice{&io, &sent});
    io.run();
    CHECK(sent == 2);
    for (int i = 0; i < 2; ++i) {
        auto r = rx.try_recv();
        REQUIRE(r);
        CHECK(*r == std::string(40, 'x')); // the second launch copied, not a moved-from husk
    }
}

TEST_CASE("asio: a deferred send launched twice sends its value twice", "[asio]") {
    asio::io_context io;
    auto [tx, rx] = cochan::mpmc::bounded<std::string>(2);
    auto op = async_send(tx, std::string(40, 'x'), cochan_test::deferred);
    int sent = 0;
    auto on_sent = [&](const cochan::send_result<std::string>& r) { sent += r ? 1 : 0; };
    op(asio::bind_executor(io, on_sent)); // as an lvalue: its stored value must not be moved from
    std::move(op)(asio::bind_executor(io, on_sent));
    io.run();
    CHECK(sent == 2);
    for (int i = 0; i < 2; ++i) {
        auto r = rx.try_recv();
        REQUIRE(r);
        CHECK(*r == std::string(40, 'x'));
    }
}

TEST_CASE("asio: racing async_recv against a timer with || loses no value",
          "[asio][exactly-once][cancellation-hand-off][fifo]") {
    using namespace asio::experimental::awaitable_operators;
    constexpr int n = 2000;
    asio::io_context io;
    auto channel = cochan::spmc::unbounded<int>(); // not a structured binding: captured below
    auto& tx = channel.first;
    auto& rx = channel.second;
    std::vector<int> received;
    int timeouts = 0;
    auto consumer = [&]() -> asio::awaitable<void> {
        asio::steady_timer timer(io);
        std::mt19937 rng(7);
        for (;;) {
            timer.expires_after(std::chrono::microseconds(rng() % 40));
            auto result = co_await (async_recv(rx, asio::use_awaitable) ||
                                    timer.async_wait(asio::use_awaitable));
            if (result.index() == 1) {
                ++timeouts;
                continue;
            }
            auto& r = std::get<0>(result);
            if (!r) {
                if (r.error() == cochan::recv_errc::disconnected) co_return;
                continue; // cancelled: the timer won after the grant; the value went back
            }
            received.push_back(*r);
        }
    };
    auto producer = [&, tx = std::move(tx)]() mutable -> asio::awaitable<void> {
        asio::steady_timer timer(io);
        std::mt19937 rng(11);
        for (int i = 0; i < n; ++i) {
            (void)tx.send(i);
            timer.expires_after(std::chrono::microseconds(rng() % 40));
            co_await timer.async_wait(asio::use_awaitable);
        }
        tx.close();
    };
    asio::co_spawn(io, consumer(), asio::detached);
    asio::co_spawn(io, producer(), asio::detached);
    io.run();
    CHECK(timeouts > 0); // the race was really run
    REQUIRE(received.size() == static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) REQUIRE(received[static_cast<std::size_t>(i)] == i);
}

TEST_CASE("asio: resume_on accepts an Asio executor", "[asio][where-resumed]") {
    asio::io_context io;
    auto [tx, rx] = cochan::spmc::bounded<int>(1);
    std::thread::id resumed_on;
    auto t = [](auto& rx, asio::io_context& io, std::thread::id& where) -> cochan_test::task<int> {
        auto r = co_await rx.recv().resume_on(io.get_executor());
        where = std::this_thread::get_id();
        co_return *r;
    }(rx, io, resumed_on);
    REQUIRE(tx.try_send(4));
    CHECK_FALSE(t.done()); // posted to the io_context, not resumed inline
    std::thread runner([&] { io.run(); });
    const auto runner_id = runner.get_id();
    runner.join();
    REQUIRE(t.done());
    CHECK(t.result() == 4);
    CHECK(resumed_on == runner_id);
}

TEST_CASE("asio: operation state comes from the handler's associated allocator", "[asio]") {
    asio::io_context io;
    auto [tx, rx] = cochan::spmc::bounded<int>(1);
    using allocator = cochan_test::counting_allocator<int, struct operation_state_tag>;
    allocator::counts::reset();
    bool done = false;
    async_recv(rx, asio::bind_allocator(
                       allocator(), asio::bind_executor(io, [&](const cochan::recv_result<int>& r) {
                           done = r.has_value();
                       })));
    CHECK(allocator::counts::allocations == 1); // the operation (then the post: lifetime.cpp)
    REQUIRE(tx.try_send(1));
    io.run();
    CHECK(done);
    CHECK(allocator::counts::deallocations == allocator::counts::allocations);
}

TEST_CASE("asio: an operation outliving its endpoint keeps the channel alive",
          "[asio][last-receiver-gone]") {
    asio::io_context io;
    std::optional<cochan::recv_result<int>> got;
    std::optional<cochan::send_result<int>> sent;
    {
        auto [tx, rx] = cochan::spmc::bounded<int>(1);
        async_recv(rx, asio::bind_executor(
                           io, [&](cochan::recv_result<int> r) { got.emplace(std::move(r)); }));
        REQUIRE(tx.try_send(0)); // granted to the operation
        async_send(tx, 1, asio::bind_executor(io, [&](cochan::send_result<int> r) {
                       sent.emplace(std::move(r));
                   }));
    } // both endpoints dropped while the operations are in flight
    io.run();
    REQUIRE(got);
    CHECK(**got == 0);
    REQUIRE(sent);
    REQUIRE_FALSE(*sent);
    CHECK(sent->error().reason == cochan::send_errc::disconnected);
    CHECK(sent->error().value == 1);
}

// Regression: a receive that took a buffered value at once let a waiting sender into the freed
// slot; a cancellation before its completion ran then found no room to hand the value back and
// destroyed it. The adapter now keeps the slot reserved until the completion runs.
TEST_CASE("asio: cancelling an immediate receive while a sender waits loses nothing",
          "[asio][cancellation-hand-off][exactly-once]") {
    asio::io_context io;
    auto [tx, rx] = cochan::mpmc::bounded<int>(1);
    REQUIRE(tx.try_send(1));
    std::optional<cochan::send_result<int>> sent;
    async_send(tx, 2, asio::bind_executor(io, [&](cochan::send_result<int> r) {
                   sent.emplace(std::move(r));
               }));
    asio::cancellation_signal signal;
    std::optional<cochan::recv_result<int>> got;
    async_recv(rx, asio::bind_cancellation_slot(
                       signal.slot(), asio::bind_executor(io, [&](cochan::recv_result<int> r) {
                           got.emplace(std::move(r));
                       })));
    signal.emit(asio::cancellation_type::terminal); // before the completion runs
    io.poll(); // not run(): the waiting send keeps work on the io_context
    REQUIRE(got);
    CHECK(got->error() == cochan::recv_errc::cancelled);
    CHECK_FALSE(sent);          // the slot 1 went back to is still taken: the sender keeps waiting
    CHECK(*rx.try_recv() == 1); // 1 went back to the head; taking it admits the sender
    io.run();
    REQUIRE(sent);
    CHECK(sent->has_value());
    CHECK(*rx.try_recv() == 2);
}

TEST_CASE("asio: racing receives on two bounded channels with || loses no value",
          "[asio][exactly-once][cancellation-hand-off]") {
    using namespace asio::experimental::awaitable_operators;
    constexpr int n = 1000;
    asio::io_context io;
    auto a = cochan::spmc::bounded<int>(1);
    auto b = cochan::spmc::bounded<int>(1);
    std::vector<int> received;
    auto producer = [](cochan::spmc::bounded_sender<int> tx, int first,
                       int count) -> asio::awaitable<void> {
        for (int i = first; i < first + count; ++i) {
            auto r = co_await async_send(tx, i, asio::use_awaitable);
            if (!r) co_return;
        }
    };
    auto consumer = [&]() -> asio::awaitable<void> {
        bool a_open = true, b_open = true;
        while (a_open && b_open) {
            auto result = co_await (async_recv(a.second, asio::use_awaitable) ||
                                    async_recv(b.second, asio::use_awaitable));
            auto& r = result.index() == 0 ? std::get<0>(result) : std::get<1>(result);
            if (r) {
                received.push_back(*r);
            } else if (r.error() == cochan::recv_errc::disconnected) {
                (result.index() == 0 ? a_open : b_open) = false;
            }
        }
        // One side ended: drain the other without racing.
        auto& rest = a_open ? a.second : b.second;
        while (auto r = co_await async_recv(rest, asio::use_awaitable)) received.push_back(*r);
    };
    asio::co_spawn(io, producer(std::move(a.first), 0, n), asio::detached);
    asio::co_spawn(io, producer(std::move(b.first), n, n), asio::detached);
    asio::co_spawn(io, consumer(), asio::detached);
    io.run();
    std::sort(received.begin(), received.end());
    REQUIRE(received.size() == static_cast<std::size_t>(2 * n));
    for (int i = 0; i < 2 * n; ++i) REQUIRE(received[static_cast<std::size_t>(i)] == i);
}

TEST_CASE("asio: resume_on(executor) keeps run() going while the coroutine waits",
          "[asio][where-resumed]") {
    asio::io_context io;
    auto channel = cochan::spmc::unbounded<int>();
    auto& tx = channel.first;
    auto& rx = channel.second;
    auto t = [](auto& rx, asio::io_context& io) -> cochan_test::task<int> {
        auto r = co_await rx.recv().resume_on(io.get_executor());
        co_return *r;
    }(rx, io);
    io.poll(); // nothing ready: without the waiting coroutine's work, the context stops here
    CHECK_FALSE(io.stopped());
    CHECK_FALSE(t.done());
    std::thread sender([&] { (void)tx.send(8); });
    io.run(); // returns only once the coroutine was resumed there
    sender.join();
    REQUIRE(t.done());
    CHECK(t.result() == 8);
}

// docs/contract.md, rule 20: async_send takes unbounded senders too, so generic Asio code works
// over both kinds; the send completes at once, but its handler still runs through the executor.
TEMPLATE_TEST_CASE("asio: async_send on an unbounded sender completes at once through the "
                   "handler's executor",
                   "[asio][unbounded-send][last-receiver-gone]",
                   (cochan::spmc::unbounded_sender<int>), (cochan::mpmc::unbounded_sender<int>)) {
    asio::io_context io;
    auto make = [] {
        if constexpr (std::is_same_v<TestType, cochan::spmc::unbounded_sender<int>>) {
            return cochan::spmc::unbounded<int>();
        } else {
            return cochan::mpmc::unbounded<int>();
        }
    };
    auto channel = make(); // no structured bindings: clang 14 cannot capture them
    auto& tx = channel.first;
    auto& rx = channel.second;
    int completed = 0;
    for (int i = 1; i <= 3; ++i) {
        async_send(tx, i, asio::bind_executor(io, [&](const cochan::send_result<int>& r) {
                       CHECK(r.has_value());
                       ++completed;
                   }));
    }
    CHECK(completed == 0); // never inside the initiating function
    CHECK(rx.size() == 3); // but the values are in the channel already: it did not wait
    io.run();
    CHECK(completed == 3);
    for (int i = 1; i <= 3; ++i) CHECK(*rx.try_recv() == i);
    // Through use_awaitable too, and with every receiver gone: disconnected, value back.
    int value_back = 0;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            auto ok = co_await async_send(tx, 4, asio::use_awaitable);
            CHECK(ok.has_value());
            { auto gone = std::move(rx); }
            auto failed = co_await async_send(tx, 5, asio::use_awaitable);
            REQUIRE_FALSE(failed);
            CHECK(failed.error().reason == cochan::send_errc::disconnected);
            value_back = failed.error().value;
        },
        asio::detached);
    io.restart();
    io.run();
    CHECK(value_back == 5);
}
