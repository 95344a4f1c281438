// The adapter's immediate completions (its fast path, detail/asio_adapter.hpp): an operation
// that completes at once posts one function object, allocated with the handler's allocator,
// and is still cancellable (a receive: its value goes back), still abandoned cleanly when the
// io_context is destroyed with it queued, and taken by the error_code forms too. Run under
// ASan with detect_leaks=1: a leak fails the run even where no assertion can see it.
#if COCHAN_TEST_BOOST_ASIO
#include <cochan/boost_asio.hpp>
#else
#include <cochan/asio.hpp>
#endif

#include "support/asio_flavour.hpp"

#include "support/counted.hpp"
#include "support/counting_allocator.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <utility>
#include <variant>
#include <vector>

using adapter::async_recv;
using adapter::async_recv_ec;
using adapter::async_send;
using adapter::async_send_ec;
using cochan_test::counted;
using cochan_test::counted_handler;
using cochan_test::handler_counts;

namespace {

using counting_allocator = cochan_test::counting_allocator<int>;
using alloc_counts = counting_allocator::counts;

/// `h` bound to `io` and to the counting allocator.
template <class H> auto counted_alloc(asio::io_context& io, H h) {
    return asio::bind_allocator(counting_allocator(), asio::bind_executor(io, std::move(h)));
}

/// A branch that completes after `posts` trips through the executor: raced against an immediate
/// receive with ||, it wins when it completes before the receive's posted completion runs.
asio::awaitable<void> after_posts(int posts) {
    for (int i = 0; i < posts; ++i) co_await asio::post(asio::use_awaitable);
}

} // namespace

TEST_CASE("asio fast path: an immediate operation allocates once, from the handler's allocator",
          "[asio][fast]") {
    asio::io_context io;
    alloc_counts::reset();
    int calls = 0;
    constexpr int n = 50;
    SECTION("async_recv on a bounded channel with values buffered") {
        auto [tx, rx] = cochan::spmc::bounded<int>(n);
        for (int i = 0; i < n; ++i) REQUIRE(tx.try_send(i));
        for (int i = 0; i < n; ++i) {
            async_recv(rx, counted_alloc(io, [&, i](cochan::recv_result<int> r) {
                           CHECK(*r == i);
                           ++calls;
                       }));
            REQUIRE(alloc_counts::allocations == i + 1); // one: the post (a waiting one makes two)
        }
    }
    SECTION("async_recv_ec on an unbounded channel with values buffered") {
        auto [tx, rx] = cochan::spmc::unbounded<int>();
        for (int i = 0; i < n; ++i) REQUIRE(tx.send(i));
        for (int i = 0; i < n; ++i) {
            async_recv_ec(rx, counted_alloc(io, [&, i](adapter::error_code ec, int v) {
                              CHECK_FALSE(ec);
                              CHECK(v == i);
                              ++calls;
                          }));
            REQUIRE(alloc_counts::allocations == i + 1);
        }
    }
    SECTION("async_recv of a disconnected channel") {
        auto [tx, rx] = cochan::mpmc::bounded<int>(1);
        { auto drop = std::move(tx); }
        for (int i = 0; i < n; ++i) {
            async_recv(rx, counted_alloc(io, [&](cochan::recv_result<int> r) {
                           CHECK(r.error() == cochan::recv_errc::disconnected);
                           ++calls;
                       }));
            REQUIRE(alloc_counts::allocations == i + 1);
        }
    }
    SECTION("async_send on a bounded channel with room") {
        auto [tx, rx] = cochan::mpmc::bounded<int>(n);
        for (int i = 0; i < n; ++i) {
            async_send(tx, i, counted_alloc(io, [&](const cochan::send_result<int>& r) {
                           CHECK(r.has_value());
                           ++calls;
                       }));
            REQUIRE(alloc_counts::allocations == i + 1);
        }
        CHECK(rx.size() == static_cast<std::size_t>(n));
    }
    SECTION("async_send_ec on an unbounded channel") {
        auto [tx, rx] = cochan::spmc::unbounded<int>();
        for (int i = 0; i < n; ++i) {
            async_send_ec(tx, i,
                          counted_alloc(io, [&](adapter::error_code ec, std::optional<int> back) {
                              CHECK_FALSE(ec);
                              CHECK_FALSE(back);
                              ++calls;
                          }));
            REQUIRE(alloc_counts::allocations == i + 1);
        }
        CHECK(rx.size() == static_cast<std::size_t>(n));
    }
    SECTION("async_send_ec on a closed sender hands the value back") {
        auto [tx, rx] = cochan::mpmc::bounded<int>(1);
        tx.close();
        for (int i = 0; i < n; ++i) {
            async_send_ec(
                tx, i, counted_alloc(io, [&, i](adapter::error_code ec, std::optional<int> back) {
                    CHECK(ec == cochan::send_errc::disconnected);
                    REQUIRE(back);
                    CHECK(*back == i);
                    ++calls;
                }));
            REQUIRE(alloc_counts::allocations == i + 1);
        }
    }
    CHECK(calls == 0); // never inside the initiating function
    io.run();
    CHECK(calls == n);
    CHECK(alloc_counts::deallocations == alloc_counts::allocations);
}

TEST_CASE("asio fast path: a waiting operation still allocates the operation and the post",
          "[asio][fast]") {
    asio::io_context io;
    alloc_counts::reset();
    auto [tx, rx] = cochan::spmc::bounded<int>(1);
    bool done = false;
    async_recv(rx, counted_alloc(io, [&](cochan::recv_result<int> r) { done = (*r == 3); }));
    CHECK(alloc_counts::allocations == 1);
    REQUIRE(tx.try_send(3));
    CHECK(alloc_counts::allocations == 2);
    io.run();
    CHECK(done);
    CHECK(alloc_counts::deallocations == 2);
}

// Every receive finds a value, so each completes at once; the other branch of || sometimes
// completes first, and the group then cancels the receive before its posted completion runs.
// The value it took must go back to the head of the channel, for the next receive.
TEST_CASE("asio fast path: || cancelling a receive that completed at once loses no value",
          "[asio][fast][exactly-once][cancellation-hand-off][fifo]") {
    using namespace asio::experimental::awaitable_operators;
    constexpr int n = 600;
    asio::io_context io;
    std::vector<int> received;
    int other_won = 0;
    auto check_all = [&] {
        REQUIRE(received.size() == static_cast<std::size_t>(n));
        std::int64_t sum = 0;
        for (int i = 0; i < n; ++i) {
            REQUIRE(received[static_cast<std::size_t>(i)] == i); // in order: given back to the head
            sum += received[static_cast<std::size_t>(i)];
        }
        CHECK(sum == std::int64_t{n} * (n - 1) / 2);
    };
    SECTION("against a timer, async_recv on an unbounded channel") {
        auto [tx, rx] = cochan::spmc::unbounded<int>();
        for (int i = 0; i < n; ++i) REQUIRE(tx.send(i));
        tx.close();
        auto consumer = [&, rx = std::move(rx)]() -> asio::awaitable<void> {
            asio::steady_timer timer(io);
            bool started = false;
            // The receive starts after k trips through the io_context: the expired timer's
            // completion is queued by then or not, ahead of the receive's own completion or not.
            auto recv_after = [&](int k) -> asio::awaitable<cochan::recv_result<int>> {
                for (int i = 0; i < k; ++i) co_await asio::post(asio::use_awaitable);
                started = true;
                co_return co_await async_recv(rx, asio::use_awaitable);
            };
            for (int k = 0;; k = (k + 1) % 8) {
                timer.expires_after(std::chrono::microseconds(0));
                started = false;
                auto result = co_await (timer.async_wait(asio::use_awaitable) || recv_after(k));
                if (result.index() == 0) {
                    // The receive, if it started, had a value: it went back.
                    if (started) ++other_won;
                    continue;
                }
                auto& r = std::get<1>(result);
                if (!r) {
                    REQUIRE(r.error() == cochan::recv_errc::disconnected);
                    co_return;
                }
                received.push_back(*r);
            }
        };
        asio::co_spawn(io, consumer(), asio::detached);
        io.run();
        check_all();
        CHECK(other_won > 0); // the timer really beat immediate receives
    }
    SECTION("against a branch finishing after k posts, async_recv_ec on a bounded channel while "
            "a sender waits") {
        auto [tx, rx] = cochan::mpmc::bounded<int>(2);
        // The producer keeps the channel full with a send waiting: a cancelled receive's value
        // must find its permit still held, not taken by the waiting send.
        auto producer = [&, tx = std::move(tx)]() mutable -> asio::awaitable<void> {
            for (int i = 0; i < n; ++i) {
                auto [ec, back] =
                    co_await async_send_ec(tx, i, cochan_test::as_tuple(asio::use_awaitable));
                REQUIRE_FALSE(ec);
            }
            tx.close();
        };
        auto consumer = [&, rx = std::move(rx)]() -> asio::awaitable<void> {
            constexpr auto token = cochan_test::as_tuple(asio::use_awaitable);
            for (int k = 0;; k = (k + 1) % 4) {
                auto result = co_await (after_posts(k) || async_recv_ec(rx, token));
                if (result.index() == 0) {
                    ++other_won;
                    continue;
                }
                auto [ec, v] = std::get<1>(result);
                if (ec == cochan::recv_errc::disconnected) co_return;
                REQUIRE_FALSE(ec);
                received.push_back(v);
            }
        };
        asio::co_spawn(io, producer(), asio::detached);
        asio::co_spawn(io, consumer(), asio::detached);
        io.run();
        check_all();
        CHECK(other_won > 0); // immediate receives really were cancelled
    }
}

TEST_CASE("asio fast path: a cancellation signal after an immediate receive hands its value back",
          "[asio][fast][cancellation-hand-off][capacity]") {
    asio::io_context io;
    auto [tx, rx] = cochan::mpmc::bounded<int>(1);
    REQUIRE(tx.try_send(1));
    asio::cancellation_signal signal;
    std::optional<std::pair<adapter::error_code, int>> got;
    async_recv_ec(rx,
                  asio::bind_cancellation_slot(
                      signal.slot(), asio::bind_executor(io, [&](adapter::error_code ec, int v) {
                          got.emplace(ec, v);
                      })));
    CHECK_FALSE(tx.try_send(2)); // the permit is held until the completion runs
    signal.emit(asio::cancellation_type::terminal);
    io.run();
    REQUIRE(got);
    CHECK(got->first == cochan::recv_errc::cancelled);
    CHECK(*rx.try_recv() == 1);
    CHECK_FALSE(signal.slot().has_handler()); // the completion cleared the slot
}

TEST_CASE("asio fast path: an io_context destroyed with an immediate completion queued gives the "
          "value back and invokes nothing",
          "[asio][fast][lifetime][exactly-once]") {
    counted::reset();
    handler_counts probes;
    SECTION("a receive, while a send waits for its permit") {
        auto [tx, rx] = cochan::mpmc::bounded<counted>(2);
        REQUIRE(tx.try_send(counted(1)));
        REQUIRE(tx.try_send(counted(2)));
        asio::io_context sender_io; // keeps a send waiting for a permit, not destroyed
        std::optional<cochan::send_result<counted>> sent;
        async_send(tx, counted(3),
                   asio::bind_executor(sender_io, [&](auto r) { sent.emplace(std::move(r)); }));
        {
            asio::io_context io;
            async_recv(rx, asio::bind_executor(io, counted_handler(&probes))); // takes 1
            CHECK(probes.alive == 1);
        }
        CHECK(probes.alive == 0); // destroyed, never invoked
        CHECK(probes.invoked == 0);
        sender_io.poll();
        CHECK_FALSE(sent); // 1 went back into the permit it kept: the send still waits
        for (int want = 1; want <= 3; ++want) {
            auto r = rx.try_recv(); // in order: 1 is back at the head
            REQUIRE(r);
            CHECK(r->value == want);
            sender_io.poll();
        }
        REQUIRE(sent);
        CHECK(sent->has_value());
    }
    SECTION("coroutines suspended on immediate operations, the io_context stopped") {
        auto [tx, rx] = cochan::spmc::unbounded<counted>();
        REQUIRE(tx.send(counted(1)));
        REQUIRE(tx.send(counted(2)));
        auto closed = cochan::mpmc::bounded<counted>(1);
        closed.first.close();
        int started = 0, resumed = 0;
        asio::cancellation_signal s1, s2; // outlive the io_context, which destroys their handlers
        {
            asio::io_context io;
            auto receiver =
                [&started,
                 &resumed](cochan::spmc::unbounded_receiver<counted>& rx) -> asio::awaitable<void> {
                counted guard(10); // lives in the frame
                ++started;
                auto r = co_await async_recv(rx, asio::use_awaitable);
                ++resumed;
            };
            auto sender = [&started, &resumed](cochan::mpmc::bounded_sender<counted>& tx,
                                               int v) -> asio::awaitable<void> {
                ++started;
                auto r = co_await async_send_ec(tx, counted(v),
                                                cochan_test::as_tuple(asio::use_awaitable));
                ++resumed;
            };
            // Cancellable coroutines (a slot connected, never signalled): their operations take
            // the posted path instead of completing inline (see the inline tests below).
            asio::co_spawn(io, receiver(rx),
                           asio::bind_cancellation_slot(s1.slot(), asio::detached));
            asio::co_spawn(io, sender(closed.first, 20), // refused at once
                           asio::bind_cancellation_slot(s2.slot(), asio::detached));
            // Run the coroutines into their immediate operations, one handler at a time; once
            // both started, their completions are queued behind them.
            while (started < 2) REQUIRE(io.poll_one() == 1);
            io.stop();
        }
        CHECK(resumed == 0);
        auto a = rx.try_recv(); // 1 is back at the head, 2 after it
        REQUIRE(a);
        CHECK(a->value == 1);
        auto b = rx.try_recv();
        REQUIRE(b);
        CHECK(b->value == 2);
    }
    CHECK(counted::live() == 0); // the guard, the refused 20 and the frames are gone
}

namespace {

/// A handler whose destruction starts a receive on the same executor (as a coroutine frame
/// destroyed at shutdown may); that receive finds a value, so it takes the fast path.
struct restarter {
    restarter(cochan::mpmc::bounded_receiver<counted>* r, asio::io_context::executor_type e,
              handler_counts* c) noexcept
        : rx(r), ex(std::move(e)), counts(c) {}
    restarter(restarter&& other) noexcept
        : rx(std::exchange(other.rx, nullptr)), ex(std::move(other.ex)), counts(other.counts) {}
    restarter(const restarter&) = delete;
    restarter& operator=(const restarter&) = delete;
    restarter& operator=(restarter&&) = delete;
    ~restarter() {
        if (rx != nullptr) async_recv(*rx, asio::bind_executor(ex, counted_handler(counts)));
    }
    void operator()(const cochan::recv_result<counted>&) { ++counts->invoked; }

    using executor_type = asio::io_context::executor_type;
    executor_type get_executor() const noexcept { return ex; }

    cochan::mpmc::bounded_receiver<counted>* rx; // owned by the live (not moved-from) handler
    asio::io_context::executor_type ex;
    handler_counts* counts;
};

} // namespace

TEST_CASE("asio fast path: an immediate receive started while its io_context is destroyed "
          "gives its value back and invokes nothing",
          "[asio][fast][lifetime][exactly-once]") {
    counted::reset();
    handler_counts probes;
    {
        auto [tx, rx] = cochan::mpmc::bounded<counted>(2);
        REQUIRE(tx.try_send(counted(1)));
        REQUIRE(tx.try_send(counted(2)));
        {
            asio::io_context io;
            // Takes 1 at once. Destroyed unrun at shutdown, it gives 1 back; then its handler's
            // destructor starts a receive that takes 1 again at once, destroyed unrun in turn.
            async_recv(rx, restarter(&rx, io.get_executor(), &probes));
        }
        CHECK(probes.alive == 0);
        CHECK(probes.invoked == 0);
        for (int want = 1; want <= 2; ++want) {
            auto r = rx.try_recv(); // both went back, 1 still ahead of 2
            REQUIRE(r);
            CHECK(r->value == want);
        }
    }
    CHECK(counted::live() == 0);
}

// ---- use_awaitable: inline completions -----------------------------------------------------
//
// With `use_awaitable`, an operation that can complete at once resumes its coroutine without a
// scheduler turn, if no cancellation can reach that coroutine, and at most
// `inline_budget::limit` times in a row on a thread (detail/asio_adapter.hpp). A handler posted
// just before an operation runs only at a scheduler turn: whether it ran by the time the
// co_await returns tells which path the operation took.

namespace {

using inline_budget = adapter::detail::inline_budget;

/// Whether a scheduler turn came between `arm()` and `turned()`.
struct turn_probe {
    asio::io_context& io;
    std::shared_ptr<bool> ran = std::make_shared<bool>(false);
    void arm() {
        ran = std::make_shared<bool>(false);
        asio::post(io, [ran = ran] { *ran = true; });
    }
    bool turned() const { return *ran; }
};

/// One of each operation that completes at once (a value buffered, a permit free), with each
/// completion convention and the awaitable tokens (bare, as_tuple, redirect_error), each preceded
/// by `probe.arm()`; appends `probe.turned()` after each.
asio::awaitable<void> one_of_each(turn_probe& probe, std::vector<bool>& turned) {
    // Every value is taken, so the queues end empty with their endpoints alive until the end.
    auto [btx, brx] = cochan::spmc::bounded<int>(4);
    auto [utx, urx] = cochan::mpmc::unbounded<int>();
    REQUIRE(btx.try_send(1));
    REQUIRE(utx.send(2));
    probe.arm();
    auto r = co_await async_recv(brx, asio::use_awaitable);
    turned.push_back(probe.turned());
    REQUIRE(r);
    CHECK(*r == 1);
    probe.arm();
    int v = co_await async_recv_ec(urx, asio::use_awaitable);
    turned.push_back(probe.turned());
    CHECK(v == 2);
    probe.arm();
    auto s = co_await async_send(btx, 3, asio::use_awaitable);
    turned.push_back(probe.turned());
    CHECK(s.has_value());
    probe.arm();
    auto unsent = co_await async_send_ec(utx, 4, asio::use_awaitable);
    turned.push_back(probe.turned());
    CHECK_FALSE(unsent);
    // as_tuple(use_awaitable), Asio's usual form for error codes, completes inline too.
    constexpr auto as_tuple = cochan_test::as_tuple(asio::use_awaitable);
    probe.arm();
    auto [sent_ec, back] = co_await async_send_ec(btx, 5, as_tuple);
    turned.push_back(probe.turned());
    CHECK_FALSE(sent_ec);
    CHECK_FALSE(back);
    probe.arm();
    auto [ec, w] = co_await async_recv_ec(brx, as_tuple);
    turned.push_back(probe.turned());
    CHECK_FALSE(ec);
    CHECK(w == 3); // sent, in order
    probe.arm();
    auto [sent] = co_await async_send(btx, 6, as_tuple);
    turned.push_back(probe.turned());
    CHECK(sent.has_value());
    probe.arm();
    auto [got] = co_await async_recv(brx, as_tuple);
    turned.push_back(probe.turned());
    REQUIRE(got);
    CHECK(*got == 5);
    // redirect_error(use_awaitable, ec), the other usual form, completes inline too, and clears
    // a code the variable held before.
    adapter::error_code ec_out = cochan::recv_errc::cancelled;
    probe.arm();
    auto unsent_again =
        co_await async_send_ec(btx, 7, asio::redirect_error(asio::use_awaitable, ec_out));
    turned.push_back(probe.turned());
    CHECK_FALSE(ec_out);
    CHECK_FALSE(unsent_again);
    ec_out = cochan::recv_errc::cancelled;
    probe.arm();
    int x = co_await async_recv_ec(brx, asio::redirect_error(asio::use_awaitable, ec_out));
    turned.push_back(probe.turned());
    CHECK_FALSE(ec_out);
    CHECK(x == 6);
    CHECK(*brx.try_recv() == 7);
    CHECK(*urx.try_recv() == 4);
}

} // namespace

TEST_CASE("asio inline: use_awaitable resumes at once when the operation completes at once and "
          "no cancellation can reach the coroutine",
          "[asio][inline]") {
    asio::io_context io;
    turn_probe probe{io};
    std::vector<bool> turned;
    inline_budget::reset(); // the budget is per thread: earlier tests on it may have spent some
    asio::co_spawn(io, one_of_each(probe, turned), asio::detached);
    io.run();
    CHECK(turned == std::vector<bool>(10, false));
}

TEST_CASE("asio inline: a coroutine that can be cancelled takes the posted path",
          "[asio][inline]") {
    asio::io_context io;
    turn_probe probe{io};
    std::vector<bool> turned;
    inline_budget::reset();
    asio::cancellation_signal signal; // never emitted: connected is what counts
    asio::co_spawn(io, one_of_each(probe, turned),
                   asio::bind_cancellation_slot(signal.slot(), asio::detached));
    io.run();
    // Each completion was posted, so a cancellation before it ran could still hand a received
    // value back (the || tests above and below).
    CHECK(turned == std::vector<bool>(10, true));
}

TEST_CASE("asio inline: at most inline_budget::limit inline completions in a row on a thread",
          "[asio][inline]") {
    constexpr int rounds = 4;
    constexpr int n = rounds * static_cast<int>(inline_budget::limit + 1);
    asio::io_context io;
    std::vector<int> ran_at; // the operations done when another handler ran
    int done = 0;
    bool finished = false;
    // Another handler of the same io_context, always ready to run again.
    std::function<void()> other = [&] {
        ran_at.push_back(done);
        if (!finished) asio::post(io, other);
    };
    auto run = [&](auto body) {
        ran_at.clear();
        done = 0;
        finished = false;
        inline_budget::reset();
        asio::post(io, other);
        asio::co_spawn(io, body(), asio::detached);
        io.run();
        io.restart();
        REQUIRE(done == n);
        // Without the budget the other handler would run once before and once after the loop.
        REQUIRE(ran_at.size() >= static_cast<std::size_t>(rounds));
        for (std::size_t i = 1; i < ran_at.size(); ++i) {
            CHECK(ran_at[i] - ran_at[i - 1] <= static_cast<int>(inline_budget::limit) + 1);
        }
    };
    SECTION("receives from a channel that always has a value") {
        auto [tx, rx] = cochan::spmc::unbounded<int>();
        for (int i = 0; i < n; ++i) REQUIRE(tx.send(i));
        run([&, rx = rx]() -> asio::awaitable<void> {
            for (int i = 0; i < n; ++i) {
                auto r = co_await async_recv(rx, asio::use_awaitable);
                REQUIRE(r);
                CHECK(*r == i);
                ++done;
            }
            finished = true;
        });
    }
    SECTION("sends into an unbounded channel") {
        auto [tx, rx] = cochan::spmc::unbounded<int>();
        run([&, &tx = tx]() -> asio::awaitable<void> {
            for (int i = 0; i < n; ++i) {
                auto s = co_await async_send(tx, i, asio::use_awaitable);
                REQUIRE(s);
                ++done;
            }
            finished = true;
        });
        for (int i = 0; i < n; ++i) CHECK(*rx.try_recv() == i);
    }
}

TEST_CASE("asio inline: || over two receives that both have values takes exactly one",
          "[asio][inline][exactly-once][cancellation-hand-off]") {
    using namespace asio::experimental::awaitable_operators;
    constexpr int n = 200;
    asio::io_context io;
    auto [tx1, rx1] = cochan::spmc::unbounded<int>();
    auto [tx2, rx2] = cochan::spmc::unbounded<int>();
    for (int i = 0; i < n; ++i) {
        REQUIRE(tx1.send(i));
        REQUIRE(tx2.send(n + i));
    }
    tx1.close();
    tx2.close();
    std::vector<int> received;
    auto consumer = [&, rx1 = rx1, rx2 = rx2]() -> asio::awaitable<void> {
        // Both branches find a value at once. Each branch is a coroutine the || can cancel, so
        // each completion is posted and the loser's value goes back; completed inline, both
        // branches would take a value and || would drop one.
        for (;;) {
            auto result = co_await (async_recv(rx1, asio::use_awaitable) ||
                                    async_recv(rx2, asio::use_awaitable));
            auto r = result.index() == 0 ? std::get<0>(result) : std::get<1>(result);
            if (!r) co_return; // the branch that won found its channel ended
            received.push_back(*r);
        }
    };
    asio::co_spawn(io, consumer(), asio::detached);
    io.run();
    // Whatever is left is still in the channels: nothing was lost, nothing taken twice.
    while (auto r = rx1.try_recv()) received.push_back(*r);
    while (auto r = rx2.try_recv()) received.push_back(*r);
    std::sort(received.begin(), received.end());
    REQUIRE(received.size() == static_cast<std::size_t>(2 * n));
    for (int i = 0; i < 2 * n; ++i) CHECK(received[static_cast<std::size_t>(i)] == i);
}
