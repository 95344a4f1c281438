// Batch receive: try_recv_many and co_await recv_many take what is buffered in one lock
// section, oldest first, free each value's slot (admitting waiting senders in FIFO order), wait
// only for the first value, and keep the rest in the channel when a move throws part-way.
#include <cochan/cochan.hpp>

#include "support/channels.hpp"
#include "support/counted.hpp"
#include "support/manual_scheduler.hpp"
#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <deque>
#include <stdexcept>
#include <vector>

using namespace cochan_test;

TEMPLATE_TEST_CASE("try_recv_many takes up to max values oldest first and leaves the rest",
                   "[recv_many][batches]", COCHAN_ALL_KINDS(int)) {
    auto [tx, rx] = TestType::make(8);
    for (int i = 1; i <= 5; ++i) REQUIRE(push(tx, i));
    std::vector<int> out;
    auto r = rx.try_recv_many(out, 3);
    REQUIRE(r);
    CHECK(*r == 3);
    CHECK(out == std::vector<int>{1, 2, 3});
    // max larger than what is buffered: takes all there is.
    std::deque<int> more; // any container with push_back
    auto r2 = rx.try_recv_many(more, 100);
    REQUIRE(r2);
    CHECK(*r2 == 2);
    CHECK(more == std::deque<int>{4, 5});
    auto r3 = rx.try_recv_many(out, 4);
    REQUIRE_FALSE(r3);
    CHECK(r3.error() == cochan::recv_errc::empty);
    tx.close();
    CHECK(rx.try_recv_many(out, 4).error() == cochan::recv_errc::disconnected);
    CHECK(out.size() == 3);
}

TEST_CASE("recv_many frees each slot: waiting senders are admitted in FIFO order, into the batch",
          "[recv_many][bounded][mpmc][batches][fifo]") {
    auto [tx, rx] = cochan::mpmc::bounded<int>(2);
    REQUIRE(tx.try_send(1));
    REQUIRE(tx.try_send(2));
    auto tx2 = tx;
    auto send = [](auto& tx, int v) -> task<bool> {
        auto r = co_await tx.send(v);
        co_return r.has_value();
    };
    auto s3 = send(tx, 3);
    auto s4 = send(tx2, 4);
    REQUIRE_FALSE(s3.done());
    REQUIRE_FALSE(s4.done());
    std::vector<int> out;
    auto r = rx.try_recv_many(out, 10);
    REQUIRE(r);
    CHECK(*r == 4);
    CHECK(out == std::vector<int>{1, 2, 3, 4});
    REQUIRE(s3.done());
    REQUIRE(s4.done());
    CHECK(s3.result());
    CHECK(s4.result());
}

TEMPLATE_TEST_CASE("co_await recv_many waits for the first value, then takes what else arrived",
                   "[recv_many][batches]", COCHAN_ALL_KINDS(int)) {
    auto [tx, rx] = TestType::make(8);
    manual_scheduler later;
    std::vector<int> out;
    auto batch = [](auto& rx, std::vector<int>& out, manual_scheduler& q) -> task<std::size_t> {
        auto r = co_await rx.recv_many(out, 10).resume_on(q.executor());
        co_return r ? *r : 0;
    }(rx, out, later);
    REQUIRE_FALSE(batch.done()); // nothing buffered: it waits
    REQUIRE(push(tx, 1));        // granted to the batch; its resumption is posted
    REQUIRE(push(tx, 2));        // buffered meanwhile
    REQUIRE(push(tx, 3));
    REQUIRE(later.run_all() == 1);
    REQUIRE(batch.done());
    CHECK(batch.result() == 3);
    CHECK(out == std::vector<int>{1, 2, 3});
}

TEMPLATE_TEST_CASE("co_await recv_many reports disconnected and cancelled like recv",
                   "[recv_many][batches][cancellation-hand-off][last-sender-gone]",
                   COCHAN_ALL_KINDS(int)) {
    auto [tx, rx] = TestType::make();
    std::vector<int> out;
    cochan::default_stop_source stop;
    auto waiting = [](auto& rx, std::vector<int>& out, cochan::default_stop_token t) -> task<int> {
        auto r = co_await rx.recv_many(out, 4, std::move(t));
        co_return r ? static_cast<int>(*r) : -static_cast<int>(r.error()) - 1;
    }(rx, out, stop.get_token());
    REQUIRE_FALSE(waiting.done());
    stop.request_stop();
    REQUIRE(waiting.done());
    CHECK(waiting.result() == -static_cast<int>(cochan::recv_errc::cancelled) - 1);
    auto ended = [](auto& rx, std::vector<int>& out) -> task<int> {
        auto r = co_await rx.recv_many(out, 4);
        co_return r ? static_cast<int>(*r) : -static_cast<int>(r.error()) - 1;
    }(rx, out);
    tx.close();
    REQUIRE(ended.done());
    CHECK(ended.result() == -static_cast<int>(cochan::recv_errc::disconnected) - 1);
    CHECK(out.empty());
}

TEMPLATE_TEST_CASE("recv_many with a move that throws part-way keeps the rest in the channel, in "
                   "order",
                   "[recv_many][faults][batches][exception-safety][exactly-once]",
                   COCHAN_ALL_KINDS(throwing_move)) {
    throwing_move::reset();
    {
        auto [tx, rx] = TestType::make(8);
        for (int i = 1; i <= 5; ++i) REQUIRE(push(tx, throwing_move(i)));
        std::vector<throwing_move> out;
        out.reserve(8);                 // so only the values' own moves can throw
        throwing_move::throw_after = 2; // the third value's move into `out` throws
        CHECK_THROWS_AS(rx.try_recv_many(out, 5), std::runtime_error);
        REQUIRE(out.size() == 2);
        CHECK(out[0].value == 1);
        CHECK(out[1].value == 2);
        std::vector<int> rest;
        while (auto r = rx.try_recv()) rest.push_back(r->value);
        CHECK(rest == std::vector<int>{3, 4, 5});
    }
    CHECK(throwing_move::live() == 0);
}

TEST_CASE("recv_many needs max >= 1", "[recv_many][batches]") {
    // max == 0 is a precondition violation, checked in every build (see tests/death); here
    // only that max == 1 behaves as a single receive.
    auto [tx, rx] = cochan::spmc::unbounded<int>();
    REQUIRE(tx.send(1));
    REQUIRE(tx.send(2));
    std::vector<int> out;
    auto r = rx.try_recv_many(out, 1);
    REQUIRE(r);
    CHECK(*r == 1);
    CHECK(out == std::vector<int>{1});
}
