// Deadlines for threads: blocking_recv_for / _until and blocking_send_for / _until give up with
// timed_out (distinct from cancelled; a send gets its value back) unless the operation was
// granted first, and leave the channel exactly as if they had never waited.
#include <cochan/cochan.hpp>

#include "support/channels.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

using namespace std::chrono_literals;
using namespace cochan_test;

TEMPLATE_TEST_CASE("blocking_recv_for times out on an empty channel and takes nothing later",
                   "[deadlines]", COCHAN_ALL_KINDS(int)) {
    auto [tx, rx] = TestType::make();
    auto r = rx.blocking_recv_for(5ms);
    REQUIRE_FALSE(r);
    CHECK(r.error() == cochan::recv_errc::timed_out);
    CHECK(r.error() != cochan::recv_errc::cancelled);
    // The timed-out receive is no longer waiting: the next value is buffered, not lost to it.
    REQUIRE(push(tx, 7));
    CHECK(rx.size() == 1);
    CHECK(*rx.try_recv() == 7);
}

TEMPLATE_TEST_CASE("blocking_recv_until with a passed deadline still takes a buffered value",
                   "[deadlines]", COCHAN_ALL_KINDS(int)) {
    auto [tx, rx] = TestType::make();
    REQUIRE(push(tx, 3));
    auto r = rx.blocking_recv_until(std::chrono::steady_clock::now() - 1s);
    REQUIRE(r);
    CHECK(*r == 3);
    auto none = rx.blocking_recv_until(std::chrono::system_clock::now()); // any clock
    CHECK(none.error() == cochan::recv_errc::timed_out);
}

TEMPLATE_TEST_CASE("blocking_recv_for returns a value sent by another thread before the deadline",
                   "[deadlines]", COCHAN_ALL_KINDS(int)) {
    auto [tx, rx] = TestType::make();
    // Whether the send lands before or while the receive waits, the result is the value: the
    // deadline (a minute) is never what decides it.
    bool sent = false; // read after join: no Catch2 assertion on the other thread
    std::thread sender([&tx = tx, &sent] { sent = push(tx, 11).has_value(); });
    auto r = rx.blocking_recv_for(60s);
    sender.join();
    CHECK(sent);
    REQUIRE(r);
    CHECK(*r == 11);
}

TEMPLATE_TEST_CASE("blocking_send_for on a full channel times out with its value back",
                   "[deadlines][bounded]", (spmc_bounded<std::string>),
                   (mpmc_bounded<std::string>)) {
    auto [tx, rx] = TestType::make(1);
    REQUIRE(tx.try_send("first"));
    auto r = tx.blocking_send_for("second", 5ms);
    REQUIRE_FALSE(r);
    CHECK(r.error().reason == cochan::send_errc::timed_out);
    CHECK(r.error().value == "second");
    // It is no longer waiting: freeing the slot does not let "second" in.
    CHECK(*rx.try_recv() == "first");
    CHECK(rx.try_recv().error() == cochan::recv_errc::empty);
    auto ok = tx.blocking_send_until("third", std::chrono::steady_clock::now() - 1s);
    CHECK(ok); // a free slot is taken even with a passed deadline
    CHECK(*rx.try_recv() == "third");
}

TEMPLATE_TEST_CASE("blocking_send_for succeeds when a receiver frees the slot in time",
                   "[deadlines][bounded]", (spmc_bounded<int>), (mpmc_bounded<int>)) {
    auto [tx, rx] = TestType::make(1);
    REQUIRE(tx.try_send(1));
    int got = 0;
    std::thread receiver([&rx = rx, &got] { got = *rx.blocking_recv(); });
    auto r = tx.blocking_send_for(2, 60s);
    receiver.join();
    CHECK(got == 1);
    REQUIRE(r);
    CHECK(*rx.try_recv() == 2);
}

TEST_CASE("timed_out has its own name", "[deadlines]") {
    CHECK(std::string(cochan::to_string(cochan::recv_errc::timed_out)).find("timed out") !=
          std::string::npos);
    CHECK(std::string(cochan::to_string(cochan::send_errc::timed_out)).find("timed out") !=
          std::string::npos);
}
