// Self-tests of the test support code (tests/support/, shared with the benchmarks): each
// utility's key behaviour once, so a failing channel test can be trusted to be about the
// channel, and a benchmark's runtime about the runtime it claims to be.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <coroutine>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

#include "support/counted.hpp"
#include "support/manual_scheduler.hpp"
#include "support/task.hpp"
#include "support/thread_pool.hpp"

using namespace cochan_test;

namespace {

// Parks the coroutine and hands its handle to the test, like a channel would.
struct park {
    std::coroutine_handle<>* slot;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) const noexcept { *slot = h; }
    void await_resume() const noexcept {}
};

task<int> two_steps(int& stage, std::coroutine_handle<>& parked) {
    stage = 1;
    co_await park{&parked};
    stage = 2;
    co_return 42;
}

task<> thrower() {
    throw std::runtime_error("boom");
    co_return;
}

task<> hold_counted(std::coroutine_handle<>& parked) {
    counted local{7};
    co_await park{&parked};
}

// Lambdas with captures must not be coroutines here: the closure dies at the
// end of the full expression while the frame still refers to it.
template <class Scheduler> task<> hop(Scheduler& sched, int hops, int& order, int& stamp) {
    for (int i = 0; i < hops; ++i) co_await sched.schedule();
    stamp = ++order;
}

detached count_on(thread_pool& pool, std::atomic<int>& hits, completion_latch& latch) {
    co_await pool.schedule();
    ++hits;
    latch.count_down();
}

detached count_eagerly(int& stage, std::coroutine_handle<>& parked) {
    counted local{1};
    stage = 1;
    co_await park{&parked};
    stage = 2;
}

lazy_detached count_lazily(int& stage) {
    counted local{2};
    stage = 1;
    co_return;
}

} // namespace

TEST_CASE("support: task is eager, keeps its result and rethrows", "[support]") {
    int stage = 0;
    std::coroutine_handle<> parked;
    task<int> t = two_steps(stage, parked);
    CHECK(stage == 1); // ran to its first suspension inside the call
    CHECK_FALSE(t.done());
    parked.resume();
    CHECK(stage == 2);
    REQUIRE(t.done());
    CHECK(t.result() == 42);

    task<> bad = thrower();
    REQUIRE(bad.done());
    CHECK(bad.has_exception());
    CHECK_THROWS_AS(bad.result(), std::runtime_error);
}

TEST_CASE("support: task::reset destroys a suspended frame's locals", "[support]") {
    counted::reset();
    std::coroutine_handle<> parked;
    task<> t = hold_counted(parked);
    CHECK(counted::live() == 1);
    t.reset();
    CHECK(counted::live() == 0);
    CHECK_FALSE(t);
}

TEST_CASE("support: manual_scheduler runs FIFO only when asked", "[support]") {
    manual_scheduler sched;
    int order = 0, first = 0, second = 0;
    task<> a = hop(sched, 1, order, first);
    task<> b = hop(sched, 2, order, second); // re-posts itself once while running
    CHECK(sched.pending() == 2);
    CHECK(order == 0);
    CHECK(sched.run_one());
    CHECK(first == 1);
    CHECK(sched.run_all() == 2); // b's first step plus its re-post
    CHECK(second == 2);
    CHECK(b.done());
    CHECK_FALSE(sched.run_one());
    CHECK(sched.posted_total() == 3);

    manual_scheduler::poster post = sched.executor();
    manual_scheduler::poster copy = post; // copyable, posts into sched
    int unused = 0;
    task<> c = hop(sched, 1, order, unused);
    copy(c.handle());
    CHECK(sched.pending() == 2);
    sched.discard_all();
    CHECK(sched.pending() == 0);
    CHECK_FALSE(c.done());
    c.reset(); // frame destroyed through its owner, never resumed
}

TEST_CASE("support: counted tracks copies, moves and lifetime", "[support]") {
    counted::reset();
    {
        counted a{5};
        counted b = a;
        counted c = std::move(a);
        CHECK(a.value == -1); // NOLINT(bugprone-use-after-move): the moved-from mark is tested
        CHECK(b == c);
        std::optional<counted> o{std::move(c)};
        CHECK(counted::copied == 1);
        CHECK(counted::moved == 2);
        CHECK(counted::live() == 4);
    }
    CHECK(counted::live() == 0);
}

TEST_CASE("support: throwing_move throws on the (k+1)-th move only", "[support]") {
    throwing_move::reset();
    {
        throwing_move a{1};
        throwing_move::throw_after = 1;
        throwing_move b = std::move(a); // first move: allowed
        CHECK(a.value == -1); // NOLINT(bugprone-use-after-move): the moved-from mark is tested
        CHECK_THROWS_AS(throwing_move(std::move(b)), std::runtime_error);
        CHECK(b.value == 1); // NOLINT(bugprone-use-after-move): a failed move leaves it intact
        CHECK(throwing_move::throw_after == -1);
        std::optional<throwing_move> o{std::move(b)}; // one-shot: moves work again
        CHECK(o->value == 1);
    }
    CHECK(throwing_move::live() == 0);
}

TEST_CASE("support: thread_pool runs functions and coroutines, drains on exit", "[support]") {
    constexpr int n = 64;
    std::atomic<int> fn_hits{0};
    std::atomic<int> coro_hits{0};
    completion_latch latch(n);
    {
        thread_pool pool(2);
        for (int i = 0; i < n; ++i) {
            pool.post([&fn_hits] { ++fn_hits; });
            count_on(pool, coro_hits, latch);
        }
        CHECK(latch.wait_for(std::chrono::seconds(10)));
    } // destructor drains the remaining function jobs
    CHECK(fn_hits == n);
    CHECK(coro_hits == n);

    completion_latch never(1);
    CHECK_FALSE(never.wait_for(std::chrono::milliseconds(1)));
}

TEST_CASE("support: detached starts at once, lazy_detached when resumed; both free themselves",
          "[support]") {
    counted::reset();
    int stage = 0;
    std::coroutine_handle<> parked;
    count_eagerly(stage, parked);
    CHECK(stage == 1); // ran to its first suspension inside the call
    CHECK(counted::live() == 1);
    parked.resume();
    CHECK(stage == 2);
    CHECK(counted::live() == 0); // finished: its frame is gone

    stage = 0;
    const std::coroutine_handle<> h = count_lazily(stage).handle();
    CHECK(stage == 0); // created suspended
    CHECK(counted::live() == 0);
    h.resume();
    CHECK(stage == 1);
    CHECK(counted::live() == 0);

    count_lazily(stage).handle().destroy(); // never started: its owner may destroy it
    CHECK(counted::live() == 0);
}

TEST_CASE("support: single_thread_scheduler runs FIFO only when asked, as manual_scheduler",
          "[support]") {
    single_thread_scheduler sched;
    int order = 0, first = 0, second = 0;
    task<> a = hop(sched, 1, order, first);
    task<> b = hop(sched, 2, order, second);
    CHECK(sched.pending() == 2);
    CHECK(sched.run_one());
    CHECK(first == 1);
    CHECK(sched.run_all() == 2);
    CHECK(second == 2);
    CHECK(a.done());
    CHECK(b.done());
    CHECK(sched.posted_total() == 3);
    int unused = 0;
    task<> c = hop(sched, 1, order, unused);
    single_thread_scheduler::poster copy = sched.executor();
    copy(c.handle());
    CHECK(sched.pending() == 2);
    sched.discard_all();
    CHECK_FALSE(c.done());
}

TEST_CASE("support: a spinning thread_pool runs functions and coroutines, drains on exit",
          "[support]") {
    constexpr int n = 64;
    std::atomic<int> fn_hits{0};
    std::atomic<int> coro_hits{0};
    completion_latch latch(n);
    {
        thread_pool pool(2, {.spin_rounds = 1000});
        CHECK(pool.size() == 2);
        for (int i = 0; i < n; ++i) {
            pool.post([&fn_hits] { ++fn_hits; });
            count_on(pool, coro_hits, latch);
        }
        CHECK(latch.wait_for(std::chrono::seconds(10)));
        // Once both idle workers sleep (their spin rounds over), a post must wake one.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (pool.sleeping() != 2 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::yield();
        REQUIRE(pool.sleeping() == 2);
        completion_latch late(1);
        pool.post([&late] { late.count_down(); });
        CHECK(late.wait_for(std::chrono::seconds(10)));
    }
    CHECK(fn_hits == n);
    CHECK(coro_hits == n);
}

TEST_CASE("support: completion_latch counts up while it waits", "[support]") {
    completion_latch latch(1);
    latch.count_up();
    CHECK(latch.remaining() == 2);
    latch.count_down();
    CHECK_FALSE(latch.wait_for(std::chrono::milliseconds(1)));
    latch.count_down();
    CHECK(latch.wait_for(std::chrono::milliseconds(1)));
}

TEST_CASE("support: tracked records where each value ended", "[support]") {
    ledger book(3);
    {
        tracked received(book, 0);
        tracked returned(book, 1);
        tracked dropped(book, 2);
        tracked moved = std::move(received); // the moved-from one no longer accounts for it
        moved.settle(&ledger::received);
        returned.settle(&ledger::returned);
        CHECK(dropped.id() == 2);
    }
    for (std::size_t id = 0; id < 3; ++id) CHECK(book.created[id] == 1);
    CHECK(book.received[0] == 1);
    CHECK(book.returned[1] == 1);
    CHECK(book.dropped[2] == 1);
    CHECK(book.dropped[0] + book.dropped[1] == 0);
}

TEST_CASE("support: counted_handler counts live handlers and invocations", "[support]") {
    handler_counts counts;
    {
        counted_handler h(&counts);
        counted_handler moved = std::move(h);
        CHECK(counts.alive == 1);
        moved(42);
        CHECK(counts.invoked == 1);
    }
    CHECK(counts.alive == 0);
}
