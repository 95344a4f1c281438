// Regression tests for the defects of the reliability review of cd94835, each named after the
// bug it pins. Each one fails (or crashes under ASan) on cd94835.
#include <cochan/cochan.hpp>

#include "support/counted.hpp"
#include "support/manual_scheduler.hpp"
#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

using namespace cochan_test;

namespace {

template <class Rx> task<std::optional<int>> receive(Rx& rx) {
    auto r = co_await rx.recv();
    if (!r) co_return std::nullopt;
    co_return *r;
}

template <class Rx> task<std::optional<int>> receive(Rx& rx, cochan::default_stop_token token) {
    auto r = co_await rx.recv(std::move(token));
    if (!r) co_return std::nullopt;
    co_return *r;
}

template <class Tx> task<bool> send(Tx& tx, int v) {
    auto r = co_await tx.send(v);
    co_return r.has_value();
}

} // namespace

// ---- 1. barging -------------------------------------------------------------------------------

// A receiver granted a value frees its slot when it takes the value, without the lock; before
// it admitted the waiting sender, a try_send on another thread could take that slot.
TEST_CASE("bug: try_send took a slot freed by a granted receiver ahead of a waiting send",
          "[regression][bounded][mpmc][no-barging]") {
    int barged = 0;
    constexpr int rounds = 2000;
    for (int round = 0; round < rounds; ++round) {
        auto [tx, rx] = cochan::mpmc::bounded<int>(1);
        manual_scheduler consumer_thread_queue;
        // The consumer waits, resumed later on another thread (it then releases its grant).
        auto consumer = [](auto& rx, manual_scheduler& q) -> task<std::optional<int>> {
            auto r = co_await rx.recv().resume_on(q.executor());
            if (!r) co_return std::nullopt;
            co_return *r;
        }(rx, consumer_thread_queue);
        REQUIRE(tx.try_send(0)); // granted to the consumer: the one slot is held by the grant
        std::atomic<bool> sent{false};
        auto sender = [](auto& tx, std::atomic<bool>& sent) -> task<bool> {
            auto r = co_await tx.send(1); // waits for the slot
            sent.store(true); // may run on the releaser thread: no Catch2 assertion here
            co_return r.has_value();
        }(tx, sent);
        REQUIRE_FALSE(sent.load());

        std::atomic<bool> go{false};
        std::atomic<bool> took{false};
        std::thread barger([&, &tx = tx] {
            while (!go.load()) std::this_thread::yield();
            while (!sent.load()) {
                if (tx.try_send(2)) {
                    took.store(true);
                    return;
                }
            }
        });
        std::thread releaser([&] {
            go.store(true);
            consumer_thread_queue.run_all(); // takes the value: frees the slot, admits the sender
        });
        releaser.join();
        barger.join();
        REQUIRE(consumer.done());
        REQUIRE(consumer.result() == 0);
        // The waiting send was older than every try_send: its value must come first.
        auto first = rx.try_recv();
        REQUIRE(first);
        if (*first != 1) ++barged;
        while (rx.try_recv()) {
        }
        while (!sender.done()) REQUIRE(rx.try_recv()); // a barged sender completes only now
        REQUIRE(sender.result());
    }
    CHECK(barged == 0);
}

// ---- 2. resumption of a destroyed frame --------------------------------------------------------

// One thread: a controller resumed inside the trampoline grants a value to a waiting receiver
// (its resumption is queued on the trampoline) and then destroys that receiver's coroutine,
// which is allowed (the value is handed on: docs/contract.md, rule 8). The trampoline then
// resumed the freed frame.
TEST_CASE("bug: the trampoline resumed a granted receiver destroyed while queued",
          "[regression][resumption][cancellation-hand-off][where-resumed]") {
    auto [ctl_tx, ctl_rx] = cochan::spmc::unbounded<int>();
    auto [tx, rx] = cochan::spmc::unbounded<int>();
    std::optional<task<std::optional<int>>> consumer;
    consumer.emplace(receive(rx));
    bool controller_ran = false;
    auto controller = [](auto& ctl_rx, auto& tx, auto& consumer, bool& ran) -> task<void> {
        auto go = co_await ctl_rx.recv();
        REQUIRE(go);
        REQUIRE(tx.send(42)); // grants 42 to the consumer, whose resumption is queued
        REQUIRE_FALSE(consumer->done());
        consumer.reset(); // destroys the granted consumer before it resumed
        ran = true;
    }(ctl_rx, tx, consumer, controller_ran);
    REQUIRE(ctl_tx.send(1)); // resumes the controller inline, through the trampoline
    REQUIRE(controller_ran);
    REQUIRE(controller.done());
    // The grant was handed back to the head of the buffer, not lost.
    auto r = rx.try_recv();
    REQUIRE(r);
    CHECK(*r == 42);
}

TEST_CASE("bug: the trampoline resumed a granted sender destroyed while queued",
          "[regression][resumption][bounded][exactly-once][where-resumed]") {
    auto [ctl_tx, ctl_rx] = cochan::spmc::unbounded<int>();
    auto [tx, rx] = cochan::mpmc::bounded<int>(1);
    REQUIRE(tx.try_send(1));
    std::optional<task<bool>> producer;
    producer.emplace(send(tx, 7)); // waits: the channel is full
    REQUIRE_FALSE(producer->done());
    auto controller = [](auto& ctl_rx, auto& rx, auto& producer) -> task<int> {
        auto go = co_await ctl_rx.recv();
        REQUIRE(go);
        auto v = rx.try_recv(); // frees the slot: 7 moves in, the producer's resumption queued
        REQUIRE(v);
        REQUIRE_FALSE(producer->done());
        producer.reset();
        co_return *v;
    }(ctl_rx, rx, producer);
    REQUIRE(ctl_tx.send(1));
    REQUIRE(controller.done());
    CHECK(controller.result() == 1);
    auto r = rx.try_recv(); // the granted send's value is in the channel, once
    REQUIRE(r);
    CHECK(*r == 7);
    CHECK_FALSE(rx.try_recv());
}

// request_stop() from a coroutine running inside the trampoline queues the cancelled receive
// instead of resuming it inside the call; destroying it then was the same use-after-free.
TEST_CASE("bug: a receive cancelled from inside the trampoline and then destroyed was resumed",
          "[regression][resumption][cancellation-hand-off][where-resumed]") {
    auto [ctl_tx, ctl_rx] = cochan::spmc::unbounded<int>();
    auto [tx, rx] = cochan::spmc::unbounded<int>();
    cochan::default_stop_source stop;
    std::optional<task<std::optional<int>>> consumer;
    consumer.emplace(receive(rx, stop.get_token()));
    auto controller = [](auto& ctl_rx, cochan::default_stop_source& stop,
                         auto& consumer) -> task<void> {
        auto go = co_await ctl_rx.recv();
        REQUIRE(go);
        stop.request_stop(); // completes the receive as cancelled; its resumption is queued
        REQUIRE_FALSE(consumer->done());
        consumer.reset();
    }(ctl_rx, stop, consumer);
    REQUIRE(ctl_tx.send(1));
    REQUIRE(controller.done());
    REQUIRE(tx.send(5)); // the cancelled receive is gone from the channel: 5 is buffered
    auto r = rx.try_recv();
    REQUIRE(r);
    CHECK(*r == 5);
}

TEST_CASE("a receive cancelled from inside the trampoline resumes when the canceller suspends",
          "[resumption][cancellation-hand-off][where-resumed]") {
    auto [ctl_tx, ctl_rx] = cochan::spmc::unbounded<int>();
    auto [tx, rx] = cochan::spmc::unbounded<int>();
    cochan::default_stop_source stop;
    auto consumer = receive(rx, stop.get_token());
    bool consumer_done_inside = true;
    auto controller = [](auto& ctl_rx, cochan::default_stop_source& stop, auto& consumer,
                         bool& done_inside) -> task<void> {
        auto go = co_await ctl_rx.recv();
        REQUIRE(go);
        stop.request_stop();
        done_inside = consumer.done();
    }(ctl_rx, stop, consumer, consumer_done_inside);
    REQUIRE(ctl_tx.send(1));
    CHECK_FALSE(consumer_done_inside); // queued, not resumed inside request_stop()
    REQUIRE(consumer.done());          // resumed once the controller finished
    CHECK_FALSE(consumer.result().has_value());
    REQUIRE(controller.done());
}

// The last sender's disconnection completes every waiting receiver in one batch. The first one
// notified ran inline and could destroy another waiter of the batch before it was notified.
TEST_CASE("bug: a receiver woken by disconnection destroyed another waiter of the same batch",
          "[regression][resumption][last-sender-gone][where-resumed]") {
    auto [tx, rx] = cochan::spmc::unbounded<int>();
    std::optional<task<std::optional<int>>> second;
    bool first_saw_disconnect = false;
    auto first = [](auto& rx, auto& second, bool& saw) -> task<void> {
        auto r = co_await rx.recv();
        saw = !r && r.error() == cochan::recv_errc::disconnected;
        second.reset(); // still waiting, or completed and queued: either way it must not resume
    }(rx, second, first_saw_disconnect);
    second.emplace(receive(rx));
    tx.close(); // wakes both: [first, second]
    REQUIRE(first.done());
    CHECK(first_saw_disconnect);
    CHECK_FALSE(second.has_value());
}

// ---- 3. capacity overflow ---------------------------------------------------------------------

// `capacity * sizeof(T)` wrapped: (2^61 + 1) * 8 is 8 bytes, and try_send wrote past them.
TEST_CASE("bug: a capacity whose size in bytes wraps allocated a tiny ring",
          "[regression][bounded][errors-and-misuse]") {
    CHECK_THROWS_AS(cochan::mpmc::bounded<std::uint64_t>((std::size_t{1} << 61) + 1),
                    std::length_error);
    CHECK_THROWS_AS(cochan::spmc::bounded<std::uint64_t>((std::size_t{1} << 61) + 1),
                    std::length_error);
    CHECK_THROWS_AS(cochan::spmc::bounded<char>(std::numeric_limits<std::size_t>::max()),
                    std::length_error);
    CHECK_THROWS_WITH(cochan::mpmc::bounded<std::uint64_t>(std::numeric_limits<std::size_t>::max()),
                      Catch::Contains("cochan::mpmc::bounded") && Catch::Contains("larger than"));
}

// ---- lifetime of a waiting operation ----------------------------------------------------------

// A granted receive resumed through resume_on after every endpoint was destroyed released its
// grant on the freed channel.
TEST_CASE("bug: a granted receive resumed after every endpoint was gone used the freed channel",
          "[regression][resumption][bounded][exactly-once][where-resumed]") {
    manual_scheduler later;
    counted::reset();
    task<std::optional<std::size_t>> consumer;
    {
        auto [tx, rx] = cochan::mpmc::bounded<counted>(2);
        // By reference: the frame holds no endpoint, so the channel has none once we drop ours.
        consumer = [](auto& rx, manual_scheduler& q) -> task<std::optional<std::size_t>> {
            auto r = co_await rx.recv().resume_on(q.executor());
            if (!r) co_return std::nullopt;
            co_return static_cast<std::size_t>(r->value);
        }(rx, later);
        REQUIRE(tx.try_send(counted(9))); // granted; the consumer resumes later
    }
    REQUIRE(later.pending() == 1);
    REQUIRE(later.run_all() == 1); // resumes after main dropped its endpoints
    REQUIRE(consumer.done());
    REQUIRE(consumer.result().has_value());
    CHECK(*consumer.result() == 9);
    consumer.reset();
    CHECK(counted::live() == 0);
}

TEST_CASE("bug: a granted send resumed after every endpoint was gone used the freed channel",
          "[regression][resumption][bounded][where-resumed]") {
    manual_scheduler later;
    std::optional<task<bool>> producer;
    {
        auto [tx, rx] = cochan::spmc::bounded<int>(1);
        REQUIRE(tx.try_send(1));
        producer.emplace([](auto& tx, manual_scheduler& q) -> task<bool> {
            auto r = co_await tx.send(2).resume_on(q.executor());
            co_return r.has_value();
        }(tx, later));
        REQUIRE(rx.try_recv()); // admits the waiting send; its resumption is posted
    }
    // Every endpoint is gone; the send resumes only now.
    REQUIRE(later.run_all() == 1);
    REQUIRE(producer->done());
    CHECK(producer->result());
}

// A grant queued on the trampoline (made by a coroutine running inside it) resumes only when
// that coroutine suspends; if it destroyed every endpoint first, the granted receive released
// its permit on a freed channel.
TEST_CASE("bug: a granted receive queued on the trampoline outlived every endpoint",
          "[regression][resumption][bounded][where-resumed]") {
    auto [ctl_tx, ctl_rx] = cochan::spmc::unbounded<int>();
    std::optional<std::pair<cochan::mpmc::bounded_sender<int>, cochan::mpmc::bounded_receiver<int>>>
        ch;
    ch.emplace(cochan::mpmc::bounded<int>(1));
    auto consumer = receive(ch->second); // by reference: holds no endpoint
    auto controller = [](auto& ctl_rx, auto& ch) -> task<void> {
        auto go = co_await ctl_rx.recv();
        REQUIRE(go);
        REQUIRE(ch->first.try_send(3)); // grants 3; the consumer's resumption is queued
        ch.reset();                     // every endpoint of the channel is gone
    }(ctl_rx, ch);
    REQUIRE(ctl_tx.send(1));
    REQUIRE(controller.done());
    REQUIRE(consumer.done());
    CHECK(consumer.result() == 3);
}

// A stop callback may fire after the operation completed and every endpoint is gone, before
// the coroutine resumed: the cancellation then touched a freed channel.
TEST_CASE("bug: a stop request after every endpoint was gone reached the freed channel",
          "[regression][resumption][cancellation-hand-off][where-resumed]") {
    manual_scheduler later;
    cochan::default_stop_source stop;
    task<std::optional<int>> consumer;
    {
        auto [tx, rx] = cochan::spmc::unbounded<int>();
        consumer = [](auto& rx, cochan::default_stop_token token,
                      manual_scheduler& q) -> task<std::optional<int>> {
            auto r = co_await rx.recv(std::move(token)).resume_on(q.executor());
            if (!r) co_return std::nullopt;
            co_return *r;
        }(rx, stop.get_token(), later);
        REQUIRE(tx.send(8)); // granted; the resumption is posted
    }
    stop.request_stop(); // the operation is done: no effect, and no freed memory touched
    REQUIRE(later.run_all() == 1);
    REQUIRE(consumer.done());
    CHECK(consumer.result() == 8);
}
