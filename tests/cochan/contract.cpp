// The competing-queue contract, for all four channel kinds: the acceptance tests of Apache
// asyncband's competing queues (apache/asyncband#305) ported to C++, adapted where cochan grants
// values and permits instead of notifying (docs/contract.md, rules 2 and 8).
#include <cochan/cochan.hpp>

#include "support/channels.hpp"
#include "support/counted.hpp"
#include "support/manual_scheduler.hpp"
#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <vector>

using namespace cochan_test;

namespace {

// Receives once, resumed through `sched`, and returns the result.
template <class Rx>
task<cochan::recv_result<typename Rx::value_type>> recv_via(Rx& rx, manual_scheduler& sched,
                                                            cochan::default_stop_token token = {}) {
    co_return co_await rx.recv(std::move(token)).resume_on(sched.executor());
}

} // namespace

TEMPLATE_TEST_CASE("receivers compete in FIFO order and drain after the sender drops",
                   "[contract][fifo][last-sender-gone]", COCHAN_ALL_KINDS(int)) {
    auto [tx, rx] = TestType::make();
    auto rx2 = rx;

    REQUIRE(push(tx, 10));
    REQUIRE(push(tx, 20));
    CHECK(*rx.try_recv() == 10);
    CHECK(*rx2.try_recv() == 20);
    CHECK(rx.try_recv().error() == cochan::recv_errc::empty);
    CHECK(rx2.try_recv().error() == cochan::recv_errc::empty);

    REQUIRE(push(tx, 30));
    REQUIRE(push(tx, 40));
    { auto gone = std::move(tx); }
    CHECK(rx.is_closed());
    CHECK(*rx.try_recv() == 30);
    CHECK(*rx2.try_recv() == 40);
    CHECK(rx.try_recv().error() == cochan::recv_errc::disconnected);
    CHECK(rx2.try_recv().error() == cochan::recv_errc::disconnected);

    manual_scheduler sched;
    auto t = recv_via(rx, sched);
    REQUIRE(t.done()); // completed without waiting
    CHECK(t.result().error() == cochan::recv_errc::disconnected);
}

TEMPLATE_TEST_CASE("waiting receivers are served oldest first", "[contract][fifo]",
                   COCHAN_ALL_KINDS(int)) {
    auto [tx, rx] = TestType::make();
    auto rx2 = rx;
    manual_scheduler sched;
    auto first = recv_via(rx2, sched); // the clone waits first
    auto second = recv_via(rx, sched);

    REQUIRE(push(tx, 10));
    CHECK(sched.run_all() == 1);
    REQUIRE(first.done());
    CHECK(*first.result() == 10);
    CHECK_FALSE(second.done());

    REQUIRE(push(tx, 20));
    sched.run_all();
    REQUIRE(second.done());
    CHECK(*second.result() == 20);
}

TEMPLATE_TEST_CASE("only the last receiver disconnects and the unsent value comes back",
                   "[contract][last-receiver-gone]", COCHAN_ALL_KINDS(int)) {
    auto [tx, rx] = TestType::make();
    { auto clone = rx; } // dropping a clone changes nothing
    CHECK_FALSE(tx.is_closed());
    REQUIRE(push(tx, 10));

    { auto last = std::move(rx); }
    CHECK(tx.is_closed());
    auto r = push(tx, 20);
    REQUIRE_FALSE(r);
    CHECK(r.error().reason == cochan::send_errc::disconnected);
    CHECK(r.error().value == 20);
}

TEMPLATE_TEST_CASE("one send wakes one of eight receivers and destroying a granted one hands on",
                   "[contract][targeted-wakeup][no-barging][cancellation-hand-off]",
                   COCHAN_ALL_KINDS(int)) {
    auto [tx, rx] = TestType::make();
    manual_scheduler sched;
    std::vector<task<cochan::recv_result<int>>> waiters;
    waiters.reserve(8);
    for (int i = 0; i < 8; ++i) waiters.push_back(recv_via(rx, sched));

    REQUIRE(push(tx, 7));
    CHECK(sched.posted_total() == 1);                         // targeted: exactly one wake-up
    CHECK(rx.try_recv().error() == cochan::recv_errc::empty); // granted, not buffered: no barging

    // Each granted receiver is destroyed before it runs: the value passes to the next, one
    // wake-up at a time, and is never stranded.
    for (std::size_t i = 0; i < 7; ++i) {
        REQUIRE(sched.pending() == 1);
        sched.discard_all();
        waiters[i].reset();
        CHECK(sched.posted_total() == i + 2);
    }
    CHECK(sched.run_all() == 1);
    REQUIRE(waiters[7].done());
    CHECK(*waiters[7].result() == 7);
    CHECK(rx.try_recv().error() == cochan::recv_errc::empty);
}

TEMPLATE_TEST_CASE("a stop request after the grant does not cancel the receive",
                   "[contract][cancellation-hand-off]", COCHAN_ALL_KINDS(int)) {
    auto [tx, rx] = TestType::make();
    manual_scheduler sched;
    cochan::default_stop_source stop;
    auto t = recv_via(rx, sched, stop.get_token());
    REQUIRE(push(tx, 5));
    stop.request_stop();
    CHECK(sched.posted_total() == 1);
    sched.run_all();
    REQUIRE(t.done());
    CHECK(*t.result() == 5);
}

TEMPLATE_TEST_CASE("cancelling before the grant removes the waiter",
                   "[contract][cancellation-hand-off]", COCHAN_ALL_KINDS(int)) {
    auto [tx, rx] = TestType::make();
    manual_scheduler sched;
    cochan::default_stop_source stop;
    auto cancelled = recv_via(rx, sched, stop.get_token());
    auto destroyed = recv_via(rx, sched);
    auto next = recv_via(rx, sched);

    stop.request_stop();
    CHECK(sched.posted_total() == 1);
    sched.run_all();
    REQUIRE(cancelled.done());
    CHECK(cancelled.result().error() == cochan::recv_errc::cancelled);

    destroyed.reset(); // a waiting coroutine destroyed: unlinked, never woken

    REQUIRE(push(tx, 1));
    CHECK(sched.posted_total() == 2);
    sched.run_all();
    REQUIRE(next.done());
    CHECK(*next.result() == 1);
}

TEMPLATE_TEST_CASE("a stop token already stopped cancels without touching the channel",
                   "[contract][cancellation-hand-off]", COCHAN_ALL_KINDS(int)) {
    auto [tx, rx] = TestType::make();
    REQUIRE(push(tx, 1));
    manual_scheduler sched;
    cochan::default_stop_source stop;
    stop.request_stop();
    auto t = recv_via(rx, sched, stop.get_token());
    REQUIRE(t.done());
    CHECK(t.result().error() == cochan::recv_errc::cancelled);
    CHECK(*rx.try_recv() == 1);
}

TEMPLATE_TEST_CASE("a receive with a live stop token takes a buffered value at once",
                   "[contract][cancellation-hand-off][where-resumed]", COCHAN_ALL_KINDS(int)) {
    // The first step (await_ready) runs with a token too: the value is taken without
    // suspending, and the token, stopped afterwards, cancels only the next receive, which
    // waits on the empty channel.
    auto [tx, rx] = TestType::make();
    REQUIRE(push(tx, 1));
    manual_scheduler sched;
    cochan::default_stop_source stop;
    auto t = recv_via(rx, sched, stop.get_token());
    REQUIRE(t.done());
    CHECK(*t.result() == 1);
    CHECK(sched.posted_total() == 0);
    auto next = recv_via(rx, sched, stop.get_token());
    REQUIRE_FALSE(next.done());
    stop.request_stop();
    sched.run_all();
    REQUIRE(next.done());
    CHECK(next.result().error() == cochan::recv_errc::cancelled);
    REQUIRE(push(tx, 2)); // nothing was left linked: the value is buffered
    CHECK(*rx.try_recv() == 2);
}

TEMPLATE_TEST_CASE("sender disconnection wakes every receiver once",
                   "[contract][last-sender-gone][targeted-wakeup]", COCHAN_ALL_KINDS(int)) {
    auto [tx, rx] = TestType::make();
    manual_scheduler sched;
    std::vector<task<cochan::recv_result<int>>> waiters;
    waiters.reserve(8);
    for (int i = 0; i < 8; ++i) waiters.push_back(recv_via(rx, sched));
    CHECK(sched.posted_total() == 0);

    tx.close();
    CHECK(sched.posted_total() == 8);
    CHECK(sched.run_all() == 8);
    for (auto& w : waiters) {
        REQUIRE(w.done());
        CHECK(w.result().error() == cochan::recv_errc::disconnected);
    }
    auto r = push(tx, 1); // a closed endpoint cannot send
    REQUIRE_FALSE(r);
    CHECK(r.error().reason == cochan::send_errc::disconnected);
    CHECK(r.error().value == 1);
}

TEMPLATE_TEST_CASE("buffered, received and rejected values are each destroyed once",
                   "[contract][exactly-once][last-receiver-gone]", COCHAN_ALL_KINDS(counted)) {
    counted::reset();
    {
        auto [tx, rx] = TestType::make();
        REQUIRE(push(tx, counted(1)));
        REQUIRE(push(tx, counted(2)));
        {
            auto received = rx.try_recv();
            REQUIRE(received);
            CHECK(received->value == 1);
        }
        const long before_drop = counted::destroyed;
        { auto last = std::move(rx); } // destroys the buffered value 2
        CHECK(counted::live() == 0);
        CHECK(counted::destroyed > before_drop);

        auto rejected = push(tx, counted(3));
        REQUIRE_FALSE(rejected);
        CHECK(rejected.error().value.value == 3); // handed back, still alive
        CHECK(counted::live() == 1);
    }
    CHECK(counted::live() == 0);
    CHECK(counted::destroyed == counted::constructed);
}
