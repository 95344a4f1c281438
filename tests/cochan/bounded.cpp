// Bounded channels: strict capacity, waiting senders, slot grants and their cancellation.
#include <cochan/cochan.hpp>

#include "support/channels.hpp"
#include "support/counted.hpp"
#include "support/manual_scheduler.hpp"
#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

using namespace cochan_test;

namespace {

template <class Tx, class V>
task<cochan::send_result<V>> send_via(Tx& tx, V v, manual_scheduler& sched,
                                      cochan::default_stop_token token = {}) {
    co_return co_await tx.send(std::move(v), std::move(token)).resume_on(sched.executor());
}

template <class Rx>
task<cochan::recv_result<typename Rx::value_type>> recv_via(Rx& rx, manual_scheduler& sched) {
    co_return co_await rx.recv().resume_on(sched.executor());
}

} // namespace

TEST_CASE("bounded(0) throws invalid_argument naming the channel kind",
          "[bounded][errors-and-misuse]") {
    auto message = [](auto make) {
        try {
            make();
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("no exception");
    };
    CHECK_THAT(message([] { (void)cochan::spmc::bounded<int>(0); }),
               Catch::Contains("cochan::spmc::bounded") && Catch::Contains("capacity"));
    CHECK_THAT(message([] { (void)cochan::mpmc::bounded<int>(0); }),
               Catch::Contains("cochan::mpmc::bounded"));
}

TEMPLATE_TEST_CASE("bounded capacity is strict and a pending send progresses once",
                   "[bounded][capacity][targeted-wakeup][fifo]", spmc_bounded<int>,
                   mpmc_bounded<int>) {
    const std::size_t cap = GENERATE(1u, 2u, 3u, 8u);
    CAPTURE(cap);
    auto [tx, rx] = TestType::make(cap);
    CHECK(tx.capacity() == cap);
    CHECK(rx.capacity() == cap);
    for (std::size_t i = 0; i < cap; ++i) REQUIRE(tx.try_send(static_cast<int>(i)));
    CHECK(rx.size() == cap);

    auto full = tx.try_send(static_cast<int>(cap));
    REQUIRE_FALSE(full);
    CHECK(full.error().reason == cochan::send_errc::full);
    CHECK(full.error().value == static_cast<int>(cap));

    manual_scheduler sched;
    auto pending = send_via(tx, static_cast<int>(cap), sched);
    CHECK_FALSE(pending.done());
    CHECK(sched.posted_total() == 0);

    CHECK(*rx.try_recv() == 0);
    CHECK(sched.posted_total() == 1); // the freed slot wakes the sender exactly once
    CHECK(rx.size() == cap);          // ...and was granted to it: the value is already queued
    sched.run_all();
    REQUIRE(pending.done());
    CHECK(pending.result().has_value());
    CHECK(sched.posted_total() == 1);

    for (std::size_t i = 1; i <= cap; ++i) CHECK(*rx.try_recv() == static_cast<int>(i));
    { auto gone = std::move(tx); }
    CHECK(rx.try_recv().error() == cochan::recv_errc::disconnected);
}

TEMPLATE_TEST_CASE("a slot granted to a waiting sender is not taken by try_send",
                   "[bounded][no-barging]", mpmc_bounded<int>) {
    auto [tx, rx] = TestType::make(1);
    REQUIRE(tx.try_send(1));
    manual_scheduler sched;
    auto pending = send_via(tx, 2, sched);
    CHECK(*rx.try_recv() == 1);
    auto barging = tx.try_send(3);
    REQUIRE_FALSE(barging);
    CHECK(barging.error().reason == cochan::send_errc::full);
    sched.run_all();
    CHECK(pending.result().has_value());
    CHECK(*rx.try_recv() == 2);
}

TEMPLATE_TEST_CASE("cancelling a send before its grant hands the value back and keeps capacity",
                   "[bounded][cancellation-hand-off][exactly-once]", spmc_bounded<counted>,
                   mpmc_bounded<counted>) {
    counted::reset();
    {
        auto [tx, rx] = TestType::make(1);
        REQUIRE(tx.try_send(counted(1)));
        manual_scheduler sched;
        cochan::default_stop_source stop;
        auto pending = send_via(tx, counted(2), sched, stop.get_token());
        REQUIRE_FALSE(pending.done());

        stop.request_stop();
        sched.run_all();
        REQUIRE(pending.done());
        auto& r = pending.result();
        REQUIRE_FALSE(r);
        CHECK(r.error().reason == cochan::send_errc::cancelled);
        CHECK(r.error().value.value == 2);
        CHECK(rx.size() == 1); // the buffered value is untouched

        CHECK(rx.try_recv()->value == 1);
        CHECK(tx.try_send(counted(3))); // the cancelled send took no capacity
        CHECK(rx.try_recv()->value == 3);
    }
    CHECK(counted::live() == 0);
}

TEMPLATE_TEST_CASE("a send with a stop token: a free slot takes it at once unless the token is "
                   "already stopped",
                   "[bounded][cancellation-hand-off][where-resumed]", spmc_bounded<int>,
                   mpmc_bounded<int>) {
    // The first step runs in await_ready with a token too: it must still honour a token that
    // is already stopped (cancelled, value back, the free slot left free), and a live token
    // must not keep a send that finds a free slot from completing at once.
    auto [tx, rx] = TestType::make(1);
    manual_scheduler sched;
    cochan::default_stop_source stopped;
    stopped.request_stop();
    auto refused = send_via(tx, 1, sched, stopped.get_token());
    REQUIRE(refused.done());
    REQUIRE_FALSE(refused.result());
    CHECK(refused.result().error().reason == cochan::send_errc::cancelled);
    CHECK(refused.result().error().value == 1);
    CHECK(rx.size() == 0);

    cochan::default_stop_source live;
    auto sent = send_via(tx, 2, sched, live.get_token());
    REQUIRE(sent.done());
    CHECK(sent.result());
    CHECK(sched.posted_total() == 0); // completed without suspending
    live.request_stop();              // after completion: no effect
    CHECK(*rx.try_recv() == 2);
}

TEMPLATE_TEST_CASE("a stop request after the slot grant does not cancel the send",
                   "[bounded][cancellation-hand-off][capacity]", spmc_bounded<counted>,
                   mpmc_bounded<counted>) {
    counted::reset();
    {
        auto [tx, rx] = TestType::make(1);
        REQUIRE(tx.try_send(counted(1)));
        manual_scheduler sched;
        cochan::default_stop_source stop;
        auto pending = send_via(tx, counted(2), sched, stop.get_token());

        CHECK(rx.try_recv()->value == 1); // grants the slot: 2 moves in
        stop.request_stop();
        sched.run_all();
        REQUIRE(pending.done());
        CHECK(pending.result().has_value());

        auto full = tx.try_send(counted(3)); // strict capacity: 2 occupies the only slot
        REQUIRE_FALSE(full);
        CHECK(full.error().reason == cochan::send_errc::full);
        CHECK(rx.try_recv()->value == 2);
    }
    CHECK(counted::live() == 0);
}

TEMPLATE_TEST_CASE("destroying a waiting send unlinks it and keeps capacity",
                   "[bounded][cancellation-hand-off]", spmc_bounded<counted>,
                   mpmc_bounded<counted>) {
    counted::reset();
    {
        auto [tx, rx] = TestType::make(1);
        REQUIRE(tx.try_send(counted(1)));
        manual_scheduler sched;
        auto pending = send_via(tx, counted(2), sched);
        pending.reset();
        CHECK(rx.try_recv()->value == 1);
        CHECK(sched.posted_total() == 0);
        CHECK(tx.try_send(counted(3)));
        CHECK(rx.try_recv()->value == 3);
    }
    CHECK(counted::live() == 0);
}

TEMPLATE_TEST_CASE("the last receiver wakes the pending sender and returns its value",
                   "[bounded][last-receiver-gone]", spmc_bounded<int>, mpmc_bounded<int>) {
    auto [tx, rx] = TestType::make(1);
    REQUIRE(tx.try_send(1));
    auto rx2 = rx;
    manual_scheduler sched;
    auto pending = send_via(tx, 2, sched);

    { auto first = std::move(rx); }
    CHECK(sched.posted_total() == 0);
    { auto last = std::move(rx2); }
    CHECK(sched.posted_total() == 1);
    sched.run_all();
    REQUIRE(pending.done());
    auto& r = pending.result();
    REQUIRE_FALSE(r);
    CHECK(r.error().reason == cochan::send_errc::disconnected);
    CHECK(r.error().value == 2);
}

TEST_CASE("waiting MPMC senders are granted slots oldest first",
          "[bounded][mpmc][fifo][targeted-wakeup]") {
    auto [tx, rx] = cochan::mpmc::bounded<int>(1);
    auto tx2 = tx;
    REQUIRE(tx.try_send(0));
    manual_scheduler sched;
    auto a = send_via(tx2, 1, sched);
    auto b = send_via(tx, 2, sched);
    auto c = send_via(tx2, 3, sched);
    for (int expected = 0; expected <= 3; ++expected) {
        CHECK(*rx.try_recv() == expected);
        sched.run_all();
    }
    CHECK(a.result().has_value());
    CHECK(b.result().has_value());
    CHECK(c.result().has_value());
    CHECK(sched.posted_total() == 3);
}

TEST_CASE("a cancelled waiting MPMC sender passes its turn to the next",
          "[bounded][mpmc][cancellation-hand-off][fifo]") {
    auto [tx, rx] = cochan::mpmc::bounded<int>(1);
    REQUIRE(tx.try_send(0));
    manual_scheduler sched;
    cochan::default_stop_source stop;
    auto a = send_via(tx, 1, sched, stop.get_token());
    auto b = send_via(tx, 2, sched);
    stop.request_stop();
    sched.run_all();
    CHECK(a.result().error().reason == cochan::send_errc::cancelled);
    CHECK(*rx.try_recv() == 0);
    sched.run_all();
    CHECK(b.result().has_value());
    CHECK(*rx.try_recv() == 2);
}

TEMPLATE_TEST_CASE("a value granted to a waiting receiver holds its slot until taken",
                   "[bounded][capacity]", spmc_bounded<int>, mpmc_bounded<int>) {
    // Strict capacity counts values granted but not yet taken by their receiver.
    auto [tx, rx] = TestType::make(1);
    manual_scheduler sched;
    auto r1 = recv_via(rx, sched);
    REQUIRE(tx.try_send(1)); // granted to r1, which has not run yet
    auto full = tx.try_send(2);
    REQUIRE_FALSE(full);
    CHECK(full.error().reason == cochan::send_errc::full);

    auto pending = send_via(tx, 2, sched);
    CHECK(sched.run_one()); // r1 takes its value: the slot frees and is granted to the send
    REQUIRE(r1.done());
    CHECK(*r1.result() == 1);
    sched.run_all();
    CHECK(pending.result().has_value());
    CHECK(*rx.try_recv() == 2);
}

TEMPLATE_TEST_CASE("a destroyed granted receiver gives its value back to the buffer head",
                   "[bounded][cancellation-hand-off][capacity]", spmc_bounded<int>,
                   mpmc_bounded<int>) {
    auto [tx, rx] = TestType::make(2);
    manual_scheduler sched;
    auto r1 = recv_via(rx, sched);
    REQUIRE(tx.try_send(1)); // granted to r1
    REQUIRE(tx.try_send(2));
    CHECK_FALSE(tx.try_send(3)); // 1 granted + 2 buffered fill both slots
    sched.discard_all();
    r1.reset(); // 1 goes back before 2: it is older
    CHECK(rx.size() == 2);
    CHECK(*rx.try_recv() == 1);
    CHECK(*rx.try_recv() == 2);
}
