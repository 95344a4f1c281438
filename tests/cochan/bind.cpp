// cochan::resume_on(target, endpoint) (formerly bind_executor): an endpoint that carries its
// resumption target resumes every awaitable it returns through that target, as
// `.resume_on(target)` would, and stays the endpoint it wraps for everything else.
#include <cochan/bind.hpp>

#include <cochan/cochan.hpp>

#include "support/manual_scheduler.hpp"
#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <type_traits>
#include <vector>

using namespace cochan_test;

TEST_CASE("a bound receiver resumes through its target, not inline", "[bind][where-resumed]") {
    auto [tx, plain_rx] = cochan::mpmc::bounded<int>(2);
    manual_scheduler sched;
    auto rx = cochan::resume_on(sched.executor(), std::move(plain_rx));
    auto t = [](const auto& rx) -> task<int> {
        auto r = co_await rx.recv();
        co_return r ? *r : -1;
    }(rx);
    REQUIRE(tx.try_send(7));
    CHECK_FALSE(t.done()); // granted, but posted to the scheduler
    CHECK(sched.posted_total() == 1);
    sched.run_all();
    CHECK(t.result() == 7);
    // Everything else is the receiver's own.
    REQUIRE(tx.try_send(8));
    CHECK(rx.size() == 1);
    CHECK(*rx.try_recv() == 8);
    cochan::default_stop_source stop;
    auto u = [](const auto& rx, cochan::default_stop_token tok) -> task<int> {
        auto r = co_await rx.recv(std::move(tok));
        co_return r ? *r : -static_cast<int>(r.error());
    }(rx, stop.get_token());
    stop.request_stop();
    CHECK_FALSE(u.done()); // the cancellation resumes through the target too
    sched.run_all();
    CHECK(u.result() == -static_cast<int>(cochan::recv_errc::cancelled));
}

TEST_CASE("a bound SPMC sender resumes its waiting sends through its target; a bound unbounded "
          "sender's send never waits",
          "[bind][where-resumed][unbounded-send]") {
    manual_scheduler sched;
    auto [plain_tx, rx] = cochan::spmc::bounded<int>(1);
    auto tx = cochan::resume_on(sched.executor(), std::move(plain_tx));
    REQUIRE(tx.try_send(1));
    auto s = [](auto& tx) -> task<bool> {
        auto r = co_await tx.send(2); // non-const: the SPMC sender's send
        co_return r.has_value();
    }(tx);
    CHECK_FALSE(s.done());
    CHECK(*rx.try_recv() == 1); // frees the slot: the waiting send is admitted, then posted
    CHECK_FALSE(s.done());
    sched.run_all();
    CHECK(s.result());
    CHECK(*rx.try_recv() == 2);

    auto [plain_utx, urx] = cochan::mpmc::unbounded<int>();
    const auto utx = cochan::resume_on(sched.executor(), std::move(plain_utx));
    REQUIRE(utx.send(3)); // a send_result, at once
    CHECK(*urx.try_recv() == 3);
}

TEST_CASE("a bound receiver's recv_many and a bound one-shot receiver resume through the target",
          "[bind][where-resumed]") {
    manual_scheduler sched;
    auto [tx, plain_rx] = cochan::spmc::unbounded<int>();
    auto rx = cochan::resume_on(sched.executor(), std::move(plain_rx));
    std::vector<int> out;
    auto t = [](const auto& rx, std::vector<int>& out) -> task<std::size_t> {
        auto n = co_await rx.recv_many(out, 8);
        co_return n ? *n : 0;
    }(rx, out);
    REQUIRE(tx.send(1));
    CHECK_FALSE(t.done());
    sched.run_all();
    CHECK(t.result() == 1);

    auto [otx, plain_orx] = cochan::oneshot<int>();
    auto orx = cochan::resume_on(sched.executor(), std::move(plain_orx));
    auto o = [](auto& orx) -> task<int> {
        auto r = co_await orx.recv();
        co_return r ? *r : -1;
    }(orx);
    REQUIRE(otx.send(5));
    CHECK_FALSE(o.done());
    sched.run_all();
    CHECK(o.result() == 5);
}

TEST_CASE("a bound receiver is still a receiver: select takes it", "[bind][select]") {
    manual_scheduler sched;
    auto [tx0, rx0] = cochan::mpmc::unbounded<int>();
    auto [tx1, plain_rx1] = cochan::mpmc::unbounded<int>();
    auto rx1 = cochan::resume_on(sched.executor(), std::move(plain_rx1));
    REQUIRE(tx1.send(4));
    auto r = cochan::try_select(rx0, rx1);
    REQUIRE(r);
    CHECK(r->index() == 1);
    CHECK(std::get<1>(*r) == 4);
}

TEST_CASE("bind_executor, resume_on's former name, still binds an endpoint", "[bind]") {
    auto [tx, plain_rx] = cochan::mpmc::bounded<int>(2);
    manual_scheduler sched;
    auto rx = cochan::bind_executor(sched.executor(), std::move(plain_rx));
    static_assert(
        std::is_same_v<decltype(rx), decltype(cochan::resume_on(sched.executor(), rx.endpoint()))>);
    auto t = [](const auto& rx) -> task<int> {
        auto r = co_await rx.recv();
        co_return r ? *r : -1;
    }(rx);
    REQUIRE(tx.try_send(3));
    CHECK_FALSE(t.done()); // posted to the scheduler, as resume_on's endpoint does
    sched.run_all();
    CHECK(t.result() == 3);
}
