// Receiver-side close: rx.close() closes the channel for sending from any receiver; waiting
// senders get their values back, receivers drain and then see disconnected; idempotent.
#include <cochan/cochan.hpp>

#include "support/channels.hpp"
#include "support/counted.hpp"
#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <vector>

using namespace cochan_test;

namespace {

template <class Rx> task<std::optional<int>> receive(Rx& rx) {
    auto r = co_await rx.recv();
    if (!r) co_return std::nullopt;
    co_return *r;
}

// The value a waiting send got back, or -1 if it succeeded.
template <class Tx> task<int> send_and_report(Tx& tx, int v) {
    auto r = co_await tx.send(v);
    if (r) co_return -1;
    REQUIRE(r.error().reason == cochan::send_errc::disconnected);
    co_return r.error().value;
}

} // namespace

TEMPLATE_TEST_CASE("rx.close: later sends fail disconnected with their value",
                   "[close][receiver-close]", COCHAN_ALL_KINDS(int)) {
    auto [tx, rx] = TestType::make();
    REQUIRE(push(tx, 1));
    rx.close();
    auto r = push(tx, 2);
    REQUIRE_FALSE(r);
    CHECK(r.error().reason == cochan::send_errc::disconnected);
    CHECK(r.error().value == 2);
    // The buffered value drains, then the channel reports disconnected.
    auto first = rx.try_recv();
    REQUIRE(first);
    CHECK(*first == 1);
    auto end = rx.try_recv();
    REQUIRE_FALSE(end);
    CHECK(end.error() == cochan::recv_errc::disconnected);
}

TEMPLATE_TEST_CASE("rx.close: is_closed on every endpoint, and it is idempotent",
                   "[close][receiver-close]", COCHAN_ALL_KINDS(int)) {
    auto [tx, rx] = TestType::make();
    auto rx2 = rx;
    CHECK_FALSE(tx.is_closed());
    CHECK_FALSE(rx.is_closed());
    rx2.close();
    CHECK(tx.is_closed());
    CHECK(rx.is_closed());
    CHECK(rx2.is_closed());
    rx2.close(); // no effect
    rx.close();
    CHECK(tx.is_closed());
    auto r = rx.try_recv();
    REQUIRE_FALSE(r);
    CHECK(r.error() == cochan::recv_errc::disconnected);
}

TEMPLATE_TEST_CASE("rx.close wakes a waiting receiver with disconnected", "[close][receiver-close]",
                   COCHAN_ALL_KINDS(int)) {
    auto [tx, rx] = TestType::make();
    auto waiting = receive(rx);
    REQUIRE_FALSE(waiting.done());
    auto rx2 = rx;
    rx2.close();
    REQUIRE(waiting.done());
    CHECK_FALSE(waiting.result().has_value());
    (void)tx;
}

TEMPLATE_TEST_CASE("rx.close while senders wait hands every waiting value back",
                   "[close][bounded][receiver-close]", (spmc_bounded<int>), (mpmc_bounded<int>)) {
    auto [tx, rx] = TestType::make(1);
    REQUIRE(tx.try_send(1));
    std::vector<task<int>> senders;
    senders.push_back(send_and_report(tx, 2));
    if constexpr (TestType::multi) {
        auto tx2 = tx;
        senders.push_back(send_and_report(tx2, 3));
        REQUIRE_FALSE(senders.back().done());
    }
    REQUIRE_FALSE(senders.front().done());
    rx.close();
    for (auto& s : senders) REQUIRE(s.done());
    CHECK(senders.front().result() == 2);
    if constexpr (TestType::multi) CHECK(senders.back().result() == 3);
    // The value accepted before the close drains; nothing else was accepted.
    auto v = rx.try_recv();
    REQUIRE(v);
    CHECK(*v == 1);
    CHECK(rx.try_recv().error() == cochan::recv_errc::disconnected);
}

TEMPLATE_TEST_CASE("rx.close loses and duplicates nothing: every value drains exactly once",
                   "[close][receiver-close][exactly-once]", COCHAN_ALL_KINDS(counted)) {
    counted::reset();
    {
        auto [tx, rx] = TestType::make(4);
        for (int i = 0; i < 3; ++i) REQUIRE(push(tx, counted(i)));
        rx.close();
        REQUIRE_FALSE(push(tx, counted(9))); // handed back with the error, destroyed with it
        std::vector<int> got;
        while (auto r = rx.try_recv()) got.push_back(r->value);
        CHECK(got == std::vector<int>{0, 1, 2});
    }
    CHECK(counted::live() == 0);
}

TEST_CASE("sender_count and receiver_count follow clones, closes and destruction", "[counts]") {
    auto [tx, rx] = cochan::mpmc::bounded<int>(2);
    CHECK(tx.sender_count() == 1);
    CHECK(rx.receiver_count() == 1);
    {
        auto tx2 = tx;
        auto rx2 = rx;
        CHECK(rx.sender_count() == 2);
        CHECK(tx.receiver_count() == 2);
        tx2.close(); // a closed sender no longer counts; its clone would not either
        auto tx3 = tx2;
        CHECK(tx.sender_count() == 1);
        rx2.close(); // closes the channel; the receiver stays connected
        CHECK(tx.receiver_count() == 2);
    }
    CHECK(tx.sender_count() == 1);
    CHECK(tx.receiver_count() == 1);
    auto moved = std::move(rx); // a move transfers, it does not add
    CHECK(tx.receiver_count() == 1);
    { auto gone = std::move(moved); }
    CHECK(tx.receiver_count() == 0);
    CHECK(tx.is_closed());

    auto [stx, srx] = cochan::spmc::unbounded<int>();
    auto srx2 = srx;
    CHECK(srx.sender_count() == 1);
    CHECK(stx.receiver_count() == 2);
    stx.close();
    CHECK(srx2.sender_count() == 0);
    CHECK(srx2.is_closed());
}
