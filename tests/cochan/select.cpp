// select and try_select: one value from whichever channel has one first, biased to the lowest
// index, exactly once: a branch that lost never keeps a value, a waiting select holds its place
// in each channel's FIFO, disconnected channels are skipped, and a stop request or the
// destruction of the waiting coroutine loses nothing.
#include <cochan/select.hpp>

#include <cochan/cochan.hpp>

#include "support/counted.hpp"
#include "support/manual_scheduler.hpp"
#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <variant>
#include <vector>

using namespace cochan_test;

namespace {

// The result of a select over int channels, flattened for assertions: {index, value}, or
// {-1, error}.
template <class R> std::pair<int, int> flat(const R& r) {
    if (!r) return {-1, static_cast<int>(r.error())};
    return std::visit([&](const auto& v) { return std::pair<int, int>(int(r->index()), int(v)); },
                      *r);
}

template <class... Rx> task<std::pair<int, int>> select_once(const Rx&... rx) {
    auto r = co_await cochan::select(rx...);
    co_return flat(r);
}

template <class... Rx>
task<std::pair<int, int>> select_until_stopped(cochan::default_stop_token token, const Rx&... rx) {
    auto r = co_await cochan::select(std::move(token), rx...);
    co_return flat(r);
}

template <class Sender> task<bool> sender(Sender& tx, int v) {
    auto r = co_await tx.send(v);
    co_return r.has_value();
}

constexpr int disconnected = static_cast<int>(cochan::recv_errc::disconnected);
constexpr int cancelled = static_cast<int>(cochan::recv_errc::cancelled);

} // namespace

TEST_CASE("try_select takes from the lowest index that has a value, and says empty or "
          "disconnected otherwise",
          "[select]") {
    auto [tx0, rx0] = cochan::spmc::bounded<int>(4);
    auto [tx1, rx1] = cochan::mpmc::unbounded<int>();
    CHECK(cochan::try_select(rx0, rx1).error() == cochan::recv_errc::empty);
    REQUIRE(tx1.send(10));
    REQUIRE(tx0.try_send(1));
    REQUIRE(tx1.send(11));
    CHECK(flat(cochan::try_select(rx0, rx1)) == std::pair(0, 1)); // both have one: index 0
    CHECK(flat(cochan::try_select(rx0, rx1)) == std::pair(1, 10));
    tx0.close(); // drained and disconnected: skipped
    CHECK(flat(cochan::try_select(rx0, rx1)) == std::pair(1, 11));
    CHECK(cochan::try_select(rx0, rx1).error() == cochan::recv_errc::empty);
    tx1.close();
    CHECK(cochan::try_select(rx0, rx1).error() == cochan::recv_errc::disconnected);
}

TEST_CASE("select over different kinds and repeated types names the branch by index", "[select]") {
    auto [tx0, rx0] = cochan::spmc::bounded<int>(2);
    auto [tx1, rx1] = cochan::mpmc::unbounded<std::string>();
    auto [tx2, rx2] = cochan::mpmc::bounded<int>(2); // same type as branch 0
    auto pick = [](const auto& a, const auto& b, const auto& c) -> task<std::string> {
        auto r = co_await cochan::select(a, b, c);
        static_assert(
            std::is_same_v<std::decay_t<decltype(*r)>, std::variant<int, std::string, int>>);
        if (!r) co_return "error";
        switch (r->index()) {
        case 0: co_return "0:" + std::to_string(std::get<0>(*r));
        case 1: co_return "1:" + std::get<1>(*r);
        default: co_return "2:" + std::to_string(std::get<2>(*r));
        }
    };
    auto t = pick(rx0, rx1, rx2);
    REQUIRE_FALSE(t.done());
    REQUIRE(tx2.try_send(7)); // the repeated type: index 2, not 0
    REQUIRE(t.done());
    CHECK(t.result() == "2:7");
    auto u = pick(rx0, rx1, rx2);
    REQUIRE(tx1.send(std::string("hello")));
    CHECK(u.result() == "1:hello");
}

TEST_CASE("a select that finds values takes the lowest index without suspending", "[select]") {
    auto [tx0, rx0] = cochan::mpmc::bounded<int>(2);
    auto [tx1, rx1] = cochan::mpmc::bounded<int>(2);
    REQUIRE(tx1.try_send(5));
    REQUIRE(tx0.try_send(4));
    auto t = select_once(rx0, rx1);
    REQUIRE(t.done());
    CHECK(t.result() == std::pair(0, 4));
    CHECK(rx1.size() == 1); // the other value stays
}

TEST_CASE("a waiting select takes exactly one value; the losing branch's channel keeps its next "
          "value for its own receivers",
          "[select][exactly-once]") {
    auto [tx0, rx0] = cochan::mpmc::unbounded<int>();
    auto [tx1, rx1] = cochan::mpmc::unbounded<int>();
    manual_scheduler sched;
    // resume_on: the select is decided but not resumed, so its branch in channel 0 stays linked
    // while values arrive there.
    auto t = [](auto& a, auto& b, auto post) -> task<std::pair<int, int>> {
        auto r = co_await cochan::select(a, b).resume_on(post);
        co_return flat(r);
    }(rx0, rx1, sched.executor());
    auto plain = [](auto& rx) -> task<int> { co_return *co_await rx.recv(); }(rx0);
    REQUIRE(tx1.send(1)); // decides the select for branch 1
    REQUIRE(sched.pending() == 1);
    REQUIRE(tx0.send(2)); // skips the select's dead branch: the plain receiver behind it gets it
    REQUIRE(plain.done());
    CHECK(plain.result() == 2);
    REQUIRE(tx0.send(3)); // nobody waits now: buffered, not swallowed by the select
    sched.run_all();
    REQUIRE(t.done());
    CHECK(t.result() == std::pair(1, 1));
    CHECK(*rx0.try_recv() == 3);
    CHECK(rx1.try_recv().error() == cochan::recv_errc::empty);
}

TEST_CASE("a waiting select holds its place in each channel's FIFO", "[select][fifo]") {
    auto [tx0, rx0] = cochan::spmc::unbounded<int>();
    auto [tx1, rx1] = cochan::spmc::unbounded<int>();
    auto recv = [](auto& rx) -> task<int> { co_return *co_await rx.recv(); };
    auto first = recv(rx0);         // waits before the select
    auto s = select_once(rx0, rx1); // second in channel 0, first in channel 1
    auto third = recv(rx0);         // after the select
    REQUIRE(tx0.send(1));
    REQUIRE(first.done());
    CHECK(first.result() == 1);
    REQUIRE_FALSE(s.done());
    REQUIRE(tx0.send(2));
    REQUIRE(s.done());
    CHECK(s.result() == std::pair(0, 2));
    REQUIRE_FALSE(third.done());
    REQUIRE(tx0.send(3));
    CHECK(third.result() == 3);
}

TEST_CASE("select skips a channel that disconnects while it waits, and is disconnected when "
          "every channel is",
          "[select][last-sender-gone]") {
    auto [tx0, rx0] = cochan::spmc::unbounded<int>();
    auto [tx1, rx1] = cochan::mpmc::bounded<int>(1);
    auto [tx2, rx2] = cochan::spmc::bounded<int>(1);
    auto t = select_once(rx0, rx1);
    tx0.close();
    REQUIRE_FALSE(t.done()); // channel 1 may still deliver
    REQUIRE(tx1.try_send(9));
    REQUIRE(t.done());
    CHECK(t.result() == std::pair(1, 9));

    auto u = select_once(rx0, rx1); // channel 0 ended already: skipped at once
    REQUIRE_FALSE(u.done());
    rx2.close(); // unrelated
    tx1.close();
    REQUIRE(u.done());
    CHECK(u.result() == std::pair(-1, disconnected));
    auto v = select_once(rx0, rx1); // every channel ended before it started
    REQUIRE(v.done());
    CHECK(v.result() == std::pair(-1, disconnected));
}

TEST_CASE("select sees a receiver-side close as the end of that branch",
          "[select][close][receiver-close]") {
    auto [tx0, rx0] = cochan::mpmc::bounded<int>(2);
    auto [tx1, rx1] = cochan::mpmc::bounded<int>(2);
    auto t = select_once(rx0, rx1);
    rx0.close();
    REQUIRE_FALSE(t.done());
    rx1.close();
    REQUIRE(t.done());
    CHECK(t.result() == std::pair(-1, disconnected));
}

TEST_CASE("a stop request cancels a waiting select, and values sent afterwards stay in their "
          "channels",
          "[select][cancel][cancellation-hand-off]") {
    auto [tx0, rx0] = cochan::mpmc::bounded<int>(2);
    auto [tx1, rx1] = cochan::spmc::unbounded<int>();
    cochan::default_stop_source stop;
    auto t = select_until_stopped(stop.get_token(), rx0, rx1);
    REQUIRE_FALSE(t.done());
    stop.request_stop();
    REQUIRE(t.done());
    CHECK(t.result() == std::pair(-1, cancelled));
    REQUIRE(tx0.try_send(1));
    REQUIRE(tx1.send(2));
    CHECK(*rx0.try_recv() == 1);
    CHECK(*rx1.try_recv() == 2);

    SECTION("a token already stopped cancels even when a value is there") {
        REQUIRE(tx0.try_send(3));
        auto u = select_until_stopped(stop.get_token(), rx0, rx1);
        REQUIRE(u.done());
        CHECK(u.result() == std::pair(-1, cancelled));
        CHECK(*rx0.try_recv() == 3);
    }
    SECTION("a stop after the value was granted does not take it back") {
        cochan::default_stop_source late;
        manual_scheduler sched;
        auto u = [](cochan::default_stop_token tok, auto& a, auto& b,
                    auto post) -> task<std::pair<int, int>> {
            auto r = co_await cochan::select(tok, a, b).resume_on(post);
            co_return flat(r);
        }(late.get_token(), rx0, rx1, sched.executor());
        REQUIRE(tx1.send(4));
        late.request_stop();
        sched.run_all();
        CHECK(u.result() == std::pair(1, 4));
    }
}

TEST_CASE("a stop request from another thread cancels a waiting select",
          "[select][cancel][cancellation-hand-off]") {
    auto [tx0, rx0] = cochan::mpmc::unbounded<int>();
    auto [tx1, rx1] = cochan::mpmc::unbounded<int>();
    cochan::default_stop_source stop;
    completion_latch done(1);
    std::pair<int, int> got{};
    [](cochan::default_stop_token tok, auto& a, auto& b, auto& out, auto& latch) -> detached {
        out = flat(co_await cochan::select(tok, a, b));
        latch.count_down();
    }(stop.get_token(), rx0, rx1, got, done);
    std::thread stopper([&] { stop.request_stop(); });
    stopper.join();
    done.wait();
    CHECK(got == std::pair(-1, cancelled));
    REQUIRE(tx0.send(1));
    CHECK(*rx0.try_recv() == 1);
}

TEST_CASE("destroying a waiting select's coroutine unlinks every branch",
          "[select][cancellation-hand-off]") {
    auto [tx0, rx0] = cochan::spmc::bounded<int>(1);
    auto [tx1, rx1] = cochan::spmc::unbounded<int>();
    auto t = select_once(rx0, rx1);
    REQUIRE_FALSE(t.done());
    t.reset();
    REQUIRE(tx0.try_send(1));
    REQUIRE(tx1.send(2));
    CHECK(*rx0.try_recv() == 1);
    CHECK(*rx1.try_recv() == 2);
}

TEST_CASE("a select destroyed after it won a value gives the value back to that channel",
          "[select][cancellation-hand-off][capacity]") {
    auto [tx0, rx0] = cochan::mpmc::bounded<int>(1);
    auto [tx1, rx1] = cochan::mpmc::bounded<int>(1);
    manual_scheduler sched;
    auto t = [](auto& a, auto& b, auto post) -> task<std::pair<int, int>> {
        auto r = co_await cochan::select(a, b).resume_on(post);
        co_return flat(r);
    }(rx0, rx1, sched.executor());
    REQUIRE(tx1.try_send(8));     // granted to the select, which is not resumed
    CHECK_FALSE(tx1.try_send(9)); // the grant holds the one permit
    sched.discard_all();
    t.reset();
    CHECK(*rx1.try_recv() == 8); // back at the head
    CHECK(rx0.try_recv().error() == cochan::recv_errc::empty);
}

TEST_CASE("select resumes through resume_on's poster, not inline",
          "[select][resume][where-resumed]") {
    auto [tx0, rx0] = cochan::spmc::unbounded<int>();
    auto [tx1, rx1] = cochan::spmc::unbounded<int>();
    manual_scheduler sched;
    auto t = [](auto& a, auto& b, auto post) -> task<std::pair<int, int>> {
        auto r = co_await cochan::select(a, b).resume_on(post);
        co_return flat(r);
    }(rx0, rx1, sched.executor());
    REQUIRE(tx0.send(3));
    CHECK_FALSE(t.done());
    CHECK(sched.posted_total() == 1);
    sched.run_all();
    CHECK(t.result() == std::pair(0, 3));
}

TEST_CASE("select on a bounded channel frees the slot it takes: a waiting sender is admitted",
          "[select][bounded]") {
    auto [tx0, rx0] = cochan::spmc::bounded<int>(1);
    auto [tx1, rx1] = cochan::spmc::bounded<int>(1);
    REQUIRE(tx0.try_send(1));
    auto s = sender(tx0, 2);
    REQUIRE_FALSE(s.done());
    auto t = select_once(rx0, rx1);
    CHECK(t.result() == std::pair(0, 1));
    REQUIRE(s.done());
    CHECK(s.result());
    CHECK(*rx0.try_recv() == 2);
}

TEST_CASE("select over rendezvous channels takes from a waiting sender and is taken from by "
          "try_send",
          "[select][rendezvous]") {
    auto [tx0, rx0] = cochan::mpmc::rendezvous<int>();
    auto [tx1, rx1] = cochan::spmc::rendezvous<int>();
    auto s = sender(tx1, 5);
    REQUIRE_FALSE(s.done());
    auto t = select_once(rx0, rx1);
    CHECK(t.result() == std::pair(1, 5));
    CHECK(s.done());
    auto u = select_once(rx0, rx1);
    REQUIRE_FALSE(u.done());
    REQUIRE(tx0.try_send(6));
    CHECK(u.result() == std::pair(0, 6));
    CHECK(tx1.try_send(7).error().reason == cochan::send_errc::full); // no branch left waiting
}

TEST_CASE("a throwing move into a waiting select reaches the sender; the select waits on and "
          "gets the next value",
          "[select][exceptions][exception-safety][exactly-once]") {
    throwing_move::reset();
    {
        auto [tx0, rx0] = cochan::spmc::unbounded<throwing_move>();
        auto [tx1, rx1] = cochan::spmc::unbounded<int>();
        auto t = [](auto& a, auto& b) -> task<int> {
            auto r = co_await cochan::select(a, b);
            co_return r->index() == 0 ? std::get<0>(*r).value : -100 - std::get<1>(*r);
        }(rx0, rx1);
        throwing_move::throw_after = 0;
        CHECK_THROWS_AS(tx0.send(throwing_move(1)), std::runtime_error);
        REQUIRE_FALSE(t.done());
        REQUIRE(tx1.send(4));
        REQUIRE(t.done());
        CHECK(t.result() == -104);
        REQUIRE(tx0.send(throwing_move(2))); // the branch in channel 0 is gone: buffered
        CHECK(rx0.try_recv()->value == 2);
    }
    CHECK(throwing_move::live() == 0);
}

namespace {

/// One select that finds a value (7) in channel 0 at once, with the `k+1`-th move of that value
/// made to throw: whichever move throws (into the result, out of it, from a waiting rendezvous
/// sender), the value is either the select's result or still in channel 0 for the next
/// receive. Before each move was checked, a throw after the channel's own move destroyed it.
/// `rendezvous`: the value waits with a sender instead of in a buffer.
template <class Select> void no_move_loses_the_value(bool rendezvous, Select select) {
    for (int k = 0; k < 6; ++k) {
        INFO("throwing move " << k + 1 << (rendezvous ? ", rendezvous" : ", buffered"));
        throwing_move::reset();
        {
            auto [tx0, rx0] = rendezvous ? cochan::spmc::rendezvous<throwing_move>()
                                         : cochan::spmc::bounded<throwing_move>(4);
            auto [tx1, rx1] = cochan::spmc::unbounded<int>();
            auto sent = [](auto& tx) -> task<bool> {
                co_return static_cast<bool>(co_await tx.send(throwing_move(7)));
            }(tx0);
            REQUIRE(sent.done() != rendezvous); // buffered, or its sender waits
            throwing_move::throw_after = k;
            std::optional<int> got; // the value the select returned, if it did not throw
            bool threw = false;
            try {
                got = select(rx0, rx1);
            } catch (const std::runtime_error&) {
                threw = true;
            }
            throwing_move::throw_after = -1;
            if (threw) {
                auto again = rx0.try_recv(); // the value, back where it was
                REQUIRE(again);
                CHECK(again->value == 7);
            } else {
                CHECK(got == 7);
                CHECK(rx0.try_recv().error() == cochan::recv_errc::empty);
            }
            REQUIRE(sent.done());
            CHECK(sent.result());
        }
        CHECK(throwing_move::live() == 0);
    }
}

int value_of(const cochan::recv_result<std::variant<throwing_move, int>>& r) {
    REQUIRE(r);
    REQUIRE(r->index() == 0);
    return std::get<0>(*r).value;
}

} // namespace

TEST_CASE("try_select of a move that throws leaves the value in its channel",
          "[select][exceptions][exception-safety][exactly-once]") {
    for (bool rendezvous : {false, true}) {
        no_move_loses_the_value(rendezvous, [](const auto& rx0, const auto& rx1) {
            return value_of(cochan::try_select(rx0, rx1));
        });
    }
}

TEST_CASE("a select that finds a value at once, whose move throws, leaves the value in its "
          "channel",
          "[select][exceptions][exception-safety][exactly-once]") {
    for (bool rendezvous : {false, true}) {
        no_move_loses_the_value(rendezvous, [](const auto& rx0, const auto& rx1) {
            auto t = [](const auto& a, const auto& b) -> task<int> {
                co_return value_of(co_await cochan::select(a, b));
            }(rx0, rx1);
            REQUIRE(t.done()); // a value was there: it did not wait
            return t.result(); // rethrows what the select threw
        });
    }
}

namespace {
// A stop source the stopper thread triggers and a consumer renews, without a data race on the
// source object: request_stop() runs on a copy taken under the mutex (it may resume the
// consumer inline, which then calls token()).
class stop_box {
  public:
    cochan::default_stop_token token() {
        std::lock_guard lock(mutex_);
        if (source_.stop_requested()) source_ = cochan::default_stop_source();
        return source_.get_token();
    }
    void stop() {
        cochan::default_stop_source copy;
        {
            std::lock_guard lock(mutex_);
            copy = source_;
        }
        copy.request_stop();
    }

  private:
    std::mutex mutex_;
    cochan::default_stop_source source_;
};
} // namespace

TEST_CASE("select loses no value across threads, stop requests and disconnection "
          "(count and checksum over 10^6 values, 4 channels)",
          "[select][threads][exactly-once][thread-safety][cancellation-hand-off]") {
    constexpr std::uint64_t per_channel = 250'000;
    constexpr int consumers = 3;
    // Named pairs, not structured bindings: clang 14 cannot capture those in a lambda.
    auto ch0 = cochan::mpmc::bounded<std::uint64_t>(16);
    auto ch1 = cochan::mpmc::unbounded<std::uint64_t>();
    auto ch2 = cochan::spmc::bounded<std::uint64_t>(4);
    auto ch3 = cochan::spmc::rendezvous<std::uint64_t>();
    auto& rx0 = ch0.second;
    auto& rx1 = ch1.second;
    auto& rx2 = ch2.second;
    auto& rx3 = ch3.second;
    std::atomic<std::uint64_t> count{0}, sum{0}, cancels{0}, failed_sends{0};
    std::atomic<bool> stopping{false};
    std::vector<std::thread> threads;
    auto produce = [&](auto tx, std::uint64_t base) {
        for (std::uint64_t i = 1; i <= per_channel; ++i) {
            if (!tx.blocking_send(base + i)) ++failed_sends;
        }
    };
    threads.emplace_back(produce, std::move(ch0.first), 0);
    threads.emplace_back(produce, std::move(ch1.first), per_channel);
    threads.emplace_back(produce, std::move(ch2.first), 2 * per_channel);
    threads.emplace_back(produce, std::move(ch3.first), 3 * per_channel);
    completion_latch finished(consumers);
    std::vector<stop_box> stops(consumers);
    auto consume = [&](stop_box& stop) -> detached {
        for (;;) {
            auto r = co_await cochan::select(stop.token(), rx0, rx1, rx2, rx3);
            if (r) {
                std::visit([&](std::uint64_t v) { sum += v; }, *r);
                ++count;
            } else if (r.error() == cochan::recv_errc::cancelled) {
                ++cancels;
            } else {
                break;
            }
        }
        finished.count_down();
    };
    for (auto& stop : stops) {
        threads.emplace_back([&] { consume(stop); });
    }
    // Stops land on the consumers wherever they are: waiting, linking, or running.
    threads.emplace_back([&] {
        for (std::uint64_t round = 0; !stopping.load(); ++round) {
            stops[round % consumers].stop();
            std::this_thread::yield();
        }
    });
    finished.wait();
    stopping = true;
    for (auto& t : threads) t.join();
    const std::uint64_t n = 4 * per_channel;
    CHECK(failed_sends == 0);
    CHECK(count == n);
    CHECK(sum == n * (n + 1) / 2);
    INFO("stop requests that cancelled a select: " << cancels.load());
    CHECK(cancels > 0);
}
