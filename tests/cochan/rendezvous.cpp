// Rendezvous channels (capacity 0): a send completes only once a receiver has the value;
// try_send pairs only with a waiting receiver, try_recv only with a waiting sender; size() is
// always 0; a value given back by a destroyed granted receiver is not lost.
#include <cochan/cochan.hpp>

#include "support/counted.hpp"
#include "support/manual_scheduler.hpp"
#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace cochan_test;

namespace {

template <class Rx> task<std::optional<int>> receive(Rx& rx) {
    auto r = co_await rx.recv();
    if (!r) co_return std::nullopt;
    co_return *r;
}

// -1: sent; otherwise the value that came back.
template <class Tx> task<int> send(Tx& tx, int v, cochan::default_stop_token token = {}) {
    auto r = co_await tx.send(v, std::move(token));
    co_return r ? -1 : r.error().value;
}

template <class Make> void both_kinds(Make make) {
    make(cochan::spmc::rendezvous<int>());
    make(cochan::mpmc::rendezvous<int>());
}

// A sender waits on a rendezvous channel with the value 3; `take(rx)` receives it without waiting
// (returns its value) while each of its first `moves` moves is made to throw in turn: whichever
// move throws, the value is taken or the sender still waits with it, and the next take gets it.
template <class Take> void throwing_take_keeps_the_sender_waiting(int moves, Take take) {
    for (int k = 0; k < moves; ++k) {
        INFO("throwing move " << k + 1);
        throwing_move::reset();
        {
            auto [tx, rx] = cochan::spmc::rendezvous<throwing_move>();
            auto sender = [](auto& tx) -> task<bool> {
                co_return static_cast<bool>(co_await tx.send(throwing_move(3)));
            }(tx);
            REQUIRE_FALSE(sender.done());
            throwing_move::throw_after = k;
            std::optional<int> got;
            try {
                got = take(rx);
            } catch (const std::runtime_error&) {
                REQUIRE_FALSE(sender.done()); // it still waits, with its value
            }
            throwing_move::throw_after = -1;
            if (!got) got = take(rx);
            CHECK(got == 3);
            REQUIRE(sender.done());
            CHECK(sender.result());
        }
        CHECK(throwing_move::live() == 0);
    }
}

} // namespace

TEST_CASE("rendezvous: capacity 0, nothing buffered; bounded(0) still throws",
          "[rendezvous][errors-and-misuse]") {
    both_kinds([](auto ch) {
        auto& [tx, rx] = ch;
        CHECK(tx.capacity() == 0);
        CHECK(rx.capacity() == 0);
        CHECK(rx.size() == 0);
        auto r = tx.try_send(1); // nobody waits to receive
        REQUIRE_FALSE(r);
        CHECK(r.error().reason == cochan::send_errc::full);
        CHECK(r.error().value == 1);
        CHECK(rx.try_recv().error() == cochan::recv_errc::empty); // nobody waits to send
    });
    CHECK_THROWS_AS(cochan::spmc::bounded<int>(0), std::invalid_argument);
    CHECK_THROWS_AS(cochan::mpmc::bounded<int>(0), std::invalid_argument);
}

TEST_CASE("rendezvous: a send completes only once a receiver has the value", "[rendezvous]") {
    both_kinds([](auto ch) {
        auto& [tx, rx] = ch;
        auto sender = send(tx, 5);
        REQUIRE_FALSE(sender.done()); // no receiver yet: it waits
        CHECK(rx.size() == 0);        // and the value is not buffered
        auto v = rx.try_recv();       // pairs with the waiting sender
        REQUIRE(v);
        CHECK(*v == 5);
        REQUIRE(sender.done());
        CHECK(sender.result() == -1);
        // The other way round: a waiting receiver takes a try_send at once.
        auto receiver = receive(rx);
        REQUIRE_FALSE(receiver.done());
        REQUIRE(tx.try_send(6));
        REQUIRE(receiver.done());
        CHECK(receiver.result() == 6);
    });
}

TEST_CASE("rendezvous: waiting senders are taken oldest first, also by recv_many",
          "[rendezvous][mpmc][fifo][batches]") {
    auto [tx, rx] = cochan::mpmc::rendezvous<int>();
    auto tx2 = tx;
    auto tx3 = tx;
    auto s1 = send(tx, 1);
    auto s2 = send(tx2, 2);
    auto s3 = send(tx3, 3);
    std::vector<int> out;
    auto n = rx.try_recv_many(out, 2);
    REQUIRE(n);
    CHECK(*n == 2);
    CHECK(out == std::vector<int>{1, 2});
    CHECK(s1.done());
    CHECK(s2.done());
    CHECK_FALSE(s3.done());
    CHECK(*rx.try_recv() == 3);
    CHECK(s3.done());
}

TEST_CASE("rendezvous: a waiting send cancelled by a stop request gets its value back",
          "[rendezvous][cancellation-hand-off]") {
    both_kinds([](auto ch) {
        auto& [tx, rx] = ch;
        cochan::default_stop_source stop;
        auto sender = send(tx, 8, stop.get_token());
        REQUIRE_FALSE(sender.done());
        stop.request_stop();
        REQUIRE(sender.done());
        CHECK(sender.result() == 8);
        CHECK(rx.try_recv().error() == cochan::recv_errc::empty); // it is gone from the channel
    });
}

TEST_CASE("rendezvous: a granted receiver destroyed before it resumed gives its value to the "
          "next receive",
          "[rendezvous][cancellation-hand-off][exactly-once]") {
    counted::reset();
    {
        auto [tx, rx] = cochan::mpmc::rendezvous<counted>();
        manual_scheduler later;
        auto doomed = [](auto& rx, manual_scheduler& q) -> task<int> {
            auto r = co_await rx.recv().resume_on(q.executor());
            co_return r ? r->value : -1;
        }(rx, later);
        REQUIRE(tx.try_send(counted(4))); // granted to `doomed`: the send has completed
        later.discard_all();
        doomed.reset(); // destroyed before it took the value: it goes back
        CHECK(rx.size() == 0);
        auto again = rx.try_recv();
        REQUIRE(again);
        CHECK(again->value == 4);
    }
    CHECK(counted::live() == 0);
}

TEST_CASE("rendezvous: is_closed() is true once every sender is gone, while a value given back "
          "still waits",
          "[rendezvous][last-sender-gone]") {
    // As on a channel with cells: is_closed() says no value will arrive any more (the sender is
    // gone), not that nothing is left to receive; the value given back is still received.
    both_kinds([](auto ch) {
        auto& [tx, rx] = ch;
        manual_scheduler later;
        auto doomed = [](auto& rx, manual_scheduler& q) -> task<int> {
            auto r = co_await rx.recv().resume_on(q.executor());
            co_return r ? *r : -1;
        }(rx, later);
        REQUIRE(tx.try_send(4)); // granted to `doomed`
        later.discard_all();
        doomed.reset(); // the value goes back to the channel
        CHECK_FALSE(rx.is_closed());
        { auto gone = std::move(tx); }
        CHECK(rx.is_closed());
        auto again = rx.try_recv();
        REQUIRE(again);
        CHECK(*again == 4);
        CHECK(rx.is_closed());
        CHECK(rx.try_recv().error() == cochan::recv_errc::disconnected);
    });
}

TEST_CASE("rendezvous: a try_recv whose move throws leaves the value with its waiting sender",
          "[rendezvous][exceptions][exception-safety][exactly-once]") {
    // The value moves once, from the waiting sender into the result (before, a throw in the
    // second move destroyed it and the sender was told it had sent).
    throwing_take_keeps_the_sender_waiting(4, [](auto& rx) {
        auto r = rx.try_recv();
        REQUIRE(r);
        return r->value;
    });
}

TEST_CASE("rendezvous: a try_recv_many whose move throws leaves the value with its waiting sender",
          "[rendezvous][recv_many][exceptions][exception-safety][exactly-once][batches]") {
    // As try_recv: the value moves once, from the waiting sender into `out` (before, it moved
    // into a temporary, the sender was told it had sent, and a throw on the move into `out`
    // left the value handed back to the channel instead of with its sender).
    throwing_take_keeps_the_sender_waiting(3, [](auto& rx) {
        std::vector<throwing_move> out;
        out.reserve(4); // so only the value's own moves can throw
        auto n = rx.try_recv_many(out, 4);
        REQUIRE(n);
        CHECK(*n == 1);
        REQUIRE(out.size() == 1);
        return out[0].value;
    });
}

TEST_CASE("rendezvous: disconnection wakes the other side; waiting senders get their values",
          "[rendezvous][last-sender-gone][last-receiver-gone]") {
    both_kinds([](auto ch) {
        auto& [tx, rx] = ch;
        auto sender = send(tx, 9);
        REQUIRE_FALSE(sender.done());
        { auto gone = std::move(rx); }
        REQUIRE(sender.done());
        CHECK(sender.result() == 9);
    });
    auto [tx, rx] = cochan::spmc::rendezvous<int>();
    auto receiver = receive(rx);
    tx.close();
    REQUIRE(receiver.done());
    CHECK_FALSE(receiver.result().has_value());
}

TEST_CASE("rendezvous: many threads send and receive, each value exactly once",
          "[rendezvous][threads][exactly-once][thread-safety]") {
    auto [tx, rx] = cochan::mpmc::rendezvous<std::uint64_t>();
    constexpr int producers = 4;
    constexpr int consumers = 4;
    constexpr std::uint64_t per_producer = 2000;
    std::atomic<std::uint64_t> sum{0};
    std::atomic<std::uint64_t> count{0};
    std::atomic<int> failed_sends{0}; // Catch2 assertions are not thread-safe: counted here
    std::vector<std::thread> threads;
    threads.reserve(consumers);
    for (int c = 0; c < consumers; ++c) {
        threads.emplace_back([&sum, &count, rx = rx] {
            while (auto v = rx.blocking_recv()) {
                sum += *v;
                ++count;
            }
        });
    }
    {
        auto senders = std::vector<cochan::mpmc::bounded_sender<std::uint64_t>>(producers, tx);
        tx.close();
        std::vector<std::thread> sending;
        sending.reserve(producers);
        for (int p = 0; p < producers; ++p) {
            sending.emplace_back([p, &failed_sends, s = std::move(senders[p])]() mutable {
                for (std::uint64_t i = 1; i <= per_producer; ++i) {
                    auto r = s.blocking_send(static_cast<std::uint64_t>(p) * per_producer + i);
                    if (!r) ++failed_sends;
                }
            });
        }
        for (auto& t : sending) t.join();
    } // the last sender goes: receivers see disconnected
    rx.close();
    for (auto& t : threads) t.join();
    const std::uint64_t n = producers * per_producer;
    CHECK(failed_sends == 0);
    CHECK(count == n);
    CHECK(sum == n * (n + 1) / 2);
}
