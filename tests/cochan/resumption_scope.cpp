// resumption_scope: inside one, a coroutine woken with the default resumption waits until the
// task that woke it suspends or returns, so a producer fills the buffer and the consumers drain
// it in runs; outside one, the first wake-up on a thread still resumes at once.
#include <cochan/resumption.hpp>

#include <cochan/cochan.hpp>

#include "support/manual_scheduler.hpp"
#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <optional>
#include <vector>

using namespace cochan_test;

namespace {

// A consumer that records, for each value, how many values the producer had sent by then, and
// counts its suspensions (receives that did not complete at once are the ones that waited).
struct trace {
    std::vector<int> seen;      // values received, in order
    std::vector<int> sent_then; // the producer's count when each was received
    int sent = 0;
};

task<> consume(cochan::spmc::bounded_receiver<int> rx, trace& t) {
    while (auto r = co_await rx.recv()) {
        t.seen.push_back(*r);
        t.sent_then.push_back(t.sent);
    }
}

task<> produce(cochan::spmc::bounded_sender<int> tx, int n, trace& t) {
    for (int i = 0; i < n; ++i) {
        auto r = co_await tx.send(i);
        if (!r) co_return;
        ++t.sent;
    }
    tx.close();
}

} // namespace

TEST_CASE("outside a scope the producer switches to the consumer on every value",
          "[resumption][scope][where-resumed]") {
    auto [tx, rx] = cochan::spmc::bounded<int>(4);
    trace t;
    auto c = consume(std::move(rx), t);
    auto p = produce(std::move(tx), 12, t);
    REQUIRE(p.done());
    REQUIRE(c.done());
    REQUIRE(t.seen.size() == 12);
    // Each value was received before the producer's send returned: a rendezvous per value.
    for (int i = 0; i < 12; ++i) CHECK(t.sent_then[i] == i);
}

TEST_CASE("inside a scope the producer fills the buffer before the consumer runs, and the "
          "consumer drains it without waiting",
          "[resumption][scope][where-resumed]") {
    auto [tx, rx] = cochan::spmc::bounded<int>(4);
    trace t;
    auto c = consume(std::move(rx), t); // waits for the first value
    std::optional<task<>> p;
    {
        cochan::resumption_scope scope;
        p.emplace(produce(std::move(tx), 12, t));
        // The consumer was granted value 0 and is queued; the producer went on until the
        // channel was full (value 0 granted, 1..3 buffered, 4 waiting for a slot).
        CHECK(t.seen.empty());
        CHECK(t.sent == 4);
    } // the scope ends: the consumer runs, then the producer it admitted, and so on
    REQUIRE(p->done());
    REQUIRE(c.done());
    REQUIRE(t.seen == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    // Values were taken in runs: the consumer saw several values per producer step.
    CHECK(t.sent_then[0] == 4);
    CHECK(t.sent_then[3] == 4);
}

TEST_CASE("a scheduler that resumes tasks inside scopes delivers every value exactly once",
          "[resumption][scope][where-resumed][exactly-once]") {
    auto [tx, rx] = cochan::mpmc::bounded<int>(8);
    single_thread_scheduler loop(true);
    std::vector<int> got;
    int consumers_done = 0;
    auto consumer = [](auto rx, std::vector<int>& got, int& done) -> lazy_detached {
        while (auto r = co_await rx.recv()) got.push_back(*r);
        ++done;
    };
    auto producer = [](auto tx, int n) -> lazy_detached {
        for (int i = 0; i < n; ++i) {
            if (!co_await tx.send(i)) co_return;
        }
    };
    for (int i = 0; i < 3; ++i) loop.post(consumer(rx, got, consumers_done).handle());
    loop.post(producer(std::move(tx), 1000).handle());
    { auto drop = std::move(rx); }
    loop.run_all();
    CHECK(consumers_done == 3);
    // Three consumers share the values: each took its own in FIFO order, but they ran in
    // turns, so the log interleaves their runs. Exactly once: every value appears once.
    std::sort(got.begin(), got.end());
    std::vector<int> all(1000);
    std::iota(all.begin(), all.end(), 0);
    CHECK(got == all);
}
