// Payload types: move-only values, counted lifetimes, and moves that throw.
#include <cochan/cochan.hpp>

#include "support/channels.hpp"
#include "support/counted.hpp"
#include "support/manual_scheduler.hpp"
#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <vector>

using namespace cochan_test;

TEMPLATE_TEST_CASE("move-only values travel through every operation", "[types][exactly-once]",
                   COCHAN_ALL_KINDS(std::unique_ptr<int>)) {
    auto [tx, rx] = TestType::make();
    REQUIRE(push(tx, std::make_unique<int>(1)));
    auto a = rx.try_recv();
    REQUIRE(a);
    CHECK(**a == 1);

    manual_scheduler sched;
    auto waiting = [](auto& rx, manual_scheduler& s) -> task<std::unique_ptr<int>> {
        auto r = co_await rx.recv().resume_on(s.executor());
        co_return std::move(*r);
    }(rx, sched);
    REQUIRE(push(tx, std::make_unique<int>(2)));
    sched.run_all();
    REQUIRE(waiting.done());
    CHECK(*waiting.result() == 2);

    { auto gone = std::move(rx); }
    auto back = push(tx, std::make_unique<int>(3));
    REQUIRE_FALSE(back);
    REQUIRE(back.error().value);
    CHECK(*back.error().value == 3);
}

namespace {
/// Move-constructible only: a channel needs no assignment of its values (channel_value).
struct not_assignable {
    explicit not_assignable(int v) : value(v) {}
    not_assignable(not_assignable&&) = default;
    not_assignable& operator=(not_assignable&&) = delete;
    not_assignable(const not_assignable&) = delete;
    not_assignable& operator=(const not_assignable&) = delete;
    int value;
};
} // namespace

TEMPLATE_TEST_CASE("values that cannot be assigned travel through the blocking calls too",
                   "[types][blocking][deadlines]", (cochan_test::spmc_bounded<not_assignable>),
                   (cochan_test::mpmc_bounded<not_assignable>)) {
    // Compiles only if no path of the blocking calls (their first step, the operation state,
    // the deadline forms) assigns a value; each call below completes at once.
    auto [tx, rx] = TestType::make(1);
    REQUIRE(tx.blocking_send(not_assignable(1)));
    auto full = tx.blocking_send_for(not_assignable(2), std::chrono::milliseconds(0));
    REQUIRE_FALSE(full);
    CHECK(full.error().reason == cochan::send_errc::timed_out);
    CHECK(full.error().value.value == 2);
    cochan::default_stop_source stop;
    auto a = rx.blocking_recv(stop.get_token());
    REQUIRE(a);
    CHECK(a->value == 1);
    REQUIRE(tx.blocking_send(not_assignable(3), stop.get_token()));
    auto b = rx.blocking_recv_for(std::chrono::milliseconds(0));
    REQUIRE(b);
    CHECK(b->value == 3);
    tx.close();
    auto refused = tx.blocking_send(not_assignable(4));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().reason == cochan::send_errc::disconnected);
    CHECK(refused.error().value.value == 4);
    CHECK(rx.blocking_recv().error() == cochan::recv_errc::disconnected);
}

TEMPLATE_TEST_CASE("counted values: nothing leaks and nothing is destroyed twice",
                   "[types][exactly-once][cancellation-hand-off]", COCHAN_ALL_KINDS(counted)) {
    counted::reset();
    {
        auto [tx, rx] = TestType::make(8);
        manual_scheduler sched;
        std::vector<task<cochan::recv_result<counted>>> waiters;
        waiters.reserve(3);
        for (int i = 0; i < 3; ++i) {
            waiters.push_back(
                [](auto& rx, manual_scheduler& s) -> task<cochan::recv_result<counted>> {
                    co_return co_await rx.recv().resume_on(s.executor());
                }(rx, sched));
        }
        for (int i = 0; i < 6; ++i) REQUIRE(push(tx, counted(i)));
        // Three values were granted to the waiters, three are buffered. Destroy one granted
        // waiter before it runs (its value goes back), run the others, drop the rest.
        sched.discard_all();
        waiters[0].reset();
        CHECK(rx.size() == 4);
        CHECK(counted::live() == 6); // 4 buffered, 2 held by granted waiters that never ran
        waiters.clear();             // destroying them hands their values back too
        CHECK(rx.size() == 6);
        CHECK(counted::live() == 6);
        std::vector<int> drained;
        while (auto r = rx.try_recv()) drained.push_back(r->value);
        std::sort(drained.begin(), drained.end());
        CHECK(drained == std::vector<int>{0, 1, 2, 3, 4, 5});
        CHECK(counted::live() == 0);
    }
    CHECK(counted::live() == 0);
    CHECK(counted::destroyed == counted::constructed);
}

TEMPLATE_TEST_CASE("a throwing move leaves the channel valid and loses no other value",
                   "[types][exception-safety][exactly-once]", COCHAN_ALL_KINDS(throwing_move)) {
    throwing_move::reset();
    {
        auto [tx, rx] = TestType::make(4);
        REQUIRE(push(tx, throwing_move(1)));

        // try_send / send: the move into the channel throws; nothing changes.
        throwing_move::throw_after = 1; // the argument's move succeeds, the next one throws
        CHECK_THROWS_AS(push(tx, throwing_move(2)), std::runtime_error);
        throwing_move::throw_after = -1;
        CHECK(rx.size() == 1);

        // try_recv: moving the value out throws; it stays buffered (strong guarantee).
        throwing_move::throw_after = 0;
        CHECK_THROWS_AS(rx.try_recv(), std::runtime_error);
        throwing_move::throw_after = -1;
        CHECK(rx.size() == 1);
        auto got = rx.try_recv();
        REQUIRE(got);
        CHECK(got->value == 1);

        // A grant to a waiting receiver whose slot move throws: the sender sees the exception,
        // the receiver keeps waiting and gets the next value.
        manual_scheduler sched;
        auto waiter = [](auto& rx, manual_scheduler& s) -> task<int> {
            auto r = co_await rx.recv().resume_on(s.executor());
            co_return r->value;
        }(rx, sched);
        throwing_move::throw_after = 1;
        CHECK_THROWS_AS(push(tx, throwing_move(3)), std::runtime_error);
        throwing_move::throw_after = -1;
        CHECK(sched.posted_total() == 0);
        REQUIRE(push(tx, throwing_move(4)));
        sched.run_all();
        REQUIRE(waiter.done());
        CHECK(waiter.result() == 4);

        REQUIRE(push(tx, throwing_move(5)));
        CHECK(rx.try_recv()->value == 5);
    }
    CHECK(throwing_move::live() == 0);
}

TEST_CASE("a throwing move while admitting a waiting sender reaches that sender only",
          "[types][exception-safety]") {
    throwing_move::reset();
    {
        auto [tx, rx] = cochan::spmc::bounded<throwing_move>(1);
        REQUIRE(tx.try_send(throwing_move(1)));
        manual_scheduler sched;
        auto sender = [](auto& tx, manual_scheduler& s) -> task<bool> {
            auto r = co_await tx.send(throwing_move(2)).resume_on(s.executor());
            co_return r.has_value();
        }(tx, sched);
        REQUIRE_FALSE(sender.done());

        // try_recv moves 1 out (succeeds), then admits the sender: moving 2 in throws. The
        // receiver still gets 1; the sender's co_await rethrows.
        throwing_move::throw_after = 1;
        auto got = rx.try_recv();
        throwing_move::throw_after = -1;
        REQUIRE(got);
        CHECK(got->value == 1);
        sched.run_all();
        REQUIRE(sender.done());
        CHECK(sender.has_exception());
        CHECK_THROWS_AS(sender.result(), std::runtime_error);

        CHECK(tx.try_send(throwing_move(3))); // the slot is free again
        CHECK(rx.try_recv()->value == 3);
    }
    CHECK(throwing_move::live() == 0);
}
