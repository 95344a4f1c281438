// Where woken coroutines resume: the trampoline keeps hand-off chains in constant stack,
// resume_on posts, and a resumed coroutine may use or destroy the channel at once.
#include <cochan/cochan.hpp>

#include "support/manual_scheduler.hpp"
#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace cochan_test;

namespace {

// Stack depth probe: the distance between the first and the deepest address seen.
struct stack_probe {
    std::uintptr_t base = 0;
    std::uintptr_t deepest = 0;
    void sample() {
        // The frame address, not a local's: ASan's use-after-return detection (on by default
        // since clang 15) moves locals to a heap-allocated fake stack.
#if defined(__GNUC__) || defined(__clang__)
        auto here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
#else
        int marker = 0;
        auto here = reinterpret_cast<std::uintptr_t>(&marker);
#endif
        if (base == 0) base = deepest = here;
        if (here < deepest) deepest = here;
    }
    std::uintptr_t depth() const {
        return base - deepest;
    }
};

task<> ping(cochan::spmc::bounded_sender<int>& out, cochan::spmc::bounded_receiver<int>& in,
            int rounds, stack_probe& probe) {
    for (int i = 0; i < rounds; ++i) {
        probe.sample();
        auto sent = co_await out.send(i);
        if (!sent) throw std::runtime_error("ping could not send");
        auto r = co_await in.recv();
        if (!r || *r != i) throw std::runtime_error("ping got a wrong reply");
    }
}

task<int> pong(cochan::spmc::bounded_receiver<int>& in, cochan::spmc::bounded_sender<int>& out,
               stack_probe& probe) {
    int n = 0;
    for (;;) {
        auto r = co_await in.recv();
        probe.sample();
        if (!r) co_return n;
        auto sent = co_await out.send(*r);
        if (!sent) co_return -1;
        ++n;
    }
}

// One stage of a pipeline: forwards every value to the next channel.
task<> stage(cochan::spmc::unbounded_receiver<int> in, cochan::spmc::unbounded_sender<int> out,
             stack_probe& probe) {
    for (;;) {
        auto r = co_await in.recv();
        probe.sample();
        if (!r) {
            out.close(); // the frame outlives the body (task's final suspend): close explicitly
            co_return;
        }
        (void)out.send(*r);
    }
}

} // namespace

TEST_CASE("a million ping-pong hand-offs run in constant stack", "[resumption][where-resumed]") {
    auto [atx, arx] = cochan::spmc::bounded<int>(1);
    auto [btx, brx] = cochan::spmc::bounded<int>(1);
    stack_probe probe;
    auto p2 = pong(arx, btx, probe);
    constexpr int rounds = 1'000'000;
    auto p1 = ping(atx, brx, rounds, probe);
    REQUIRE(p1.done());
    p1.result();
    atx.close();
    REQUIRE(p2.done());
    CHECK(p2.result() == rounds);
    CHECK(probe.depth() < std::uintptr_t{64} * 1024);
}

TEST_CASE("a value through a long pipeline of waiting stages runs in constant stack",
          "[resumption][where-resumed]") {
    // Each stage waits on its input; one send wakes stage 0, whose send wakes stage 1, and so
    // on. Resuming each nested inside the previous would need stack proportional to the
    // pipeline's length; the trampoline resumes them one after another.
    constexpr int stages = 20'000;
    stack_probe probe;
    std::vector<task<>> tasks;
    auto [head_tx, head_rx] = cochan::spmc::unbounded<int>();
    auto rx = std::move(head_rx);
    for (int i = 0; i < stages; ++i) {
        auto [tx, next_rx] = cochan::spmc::unbounded<int>();
        tasks.push_back(stage(std::move(rx), std::move(tx), probe));
        rx = std::move(next_rx);
    }
    REQUIRE(head_tx.send(42));
    auto out = rx.try_recv();
    REQUIRE(out);
    CHECK(*out == 42);
    CHECK(probe.depth() < std::uintptr_t{64} * 1024);
    head_tx.close(); // the disconnection also travels the pipeline
    CHECK(rx.try_recv().error() == cochan::recv_errc::disconnected);
    for (auto& t : tasks) CHECK(t.done());
}

TEST_CASE("resume_on resumes through the given invocable, not inline",
          "[resumption][where-resumed]") {
    auto [tx, rx] = cochan::spmc::bounded<int>(4);
    manual_scheduler sched;
    std::thread::id resumed_on;
    auto t = [](auto& rx, manual_scheduler& s, std::thread::id& where) -> task<int> {
        auto r = co_await rx.recv().resume_on(s.executor());
        where = std::this_thread::get_id();
        co_return *r;
    }(rx, sched, resumed_on);

    REQUIRE(tx.try_send(3));
    CHECK_FALSE(t.done()); // posted, not run inline
    CHECK(sched.pending() == 1);
    std::thread runner([&] { sched.run_all(); });
    runner.join();
    REQUIRE(t.done());
    CHECK(t.result() == 3);
    CHECK(resumed_on != std::this_thread::get_id());
}

TEST_CASE("by default a woken receiver resumes inline on the completing thread",
          "[resumption][where-resumed]") {
    auto channel = cochan::spmc::bounded<int>(4);
    auto& tx = channel.first; // not a structured binding: clang 14 lambdas cannot capture those
    auto& rx = channel.second;
    std::thread::id resumed_on;
    auto t = [](auto& rx, std::thread::id& where) -> task<int> {
        auto r = co_await rx.recv();
        where = std::this_thread::get_id();
        co_return *r;
    }(rx, resumed_on);
    bool sent = false;
    std::thread sender([&] { sent = tx.try_send(9).has_value(); });
    const auto sender_id = sender.get_id();
    sender.join();
    CHECK(sent);
    REQUIRE(t.done());
    CHECK(t.result() == 9);
    CHECK(resumed_on == sender_id);
}

TEST_CASE("a resumed receiver may at once use or destroy the channel",
          "[resumption][no-user-code-under-lock][where-resumed]") {
    auto [tx, rx] = cochan::mpmc::bounded<int>(1);
    std::optional<cochan::mpmc::bounded_receiver<int>> owned(std::move(rx));
    std::vector<int> seen;
    auto t = [](auto& owned, auto tx, std::vector<int>& seen) -> task<> {
        auto r = co_await owned->recv(); // resumed inside the sender's try_send
        seen.push_back(*r);
        // Every operation on the same channel, from inside the completion: no deadlock.
        CHECK(owned->try_recv().error() == cochan::recv_errc::empty);
        CHECK(tx.try_send(2));
        CHECK(*owned->try_recv() == 2);
        auto again = co_await owned->recv(); // waits: nothing is buffered
        seen.push_back(*again);
        owned.reset(); // destroys the last receiver while the sender's call is still running
    }(owned, tx, seen);

    REQUIRE(tx.try_send(1));
    REQUIRE(tx.try_send(3));
    REQUIRE(t.done());
    CHECK(seen == std::vector<int>{1, 3});
    auto r = tx.try_send(4);
    CHECK(r.error().reason == cochan::send_errc::disconnected);
}

TEST_CASE("a resumed sender may at once send again",
          "[resumption][no-user-code-under-lock][where-resumed]") {
    auto [tx, rx] = cochan::spmc::bounded<int>(1);
    REQUIRE(tx.try_send(0));
    auto t = [](auto& tx) -> task<> {
        auto first = co_await tx.send(1); // waits for the slot
        CHECK(first.has_value());
        CHECK_FALSE(tx.try_send(2)); // resumed inside try_recv: the slot is taken again
        auto second = co_await tx.send(2);
        CHECK(second.has_value());
    }(tx);
    CHECK(*rx.try_recv() == 0);
    CHECK(*rx.try_recv() == 1);
    CHECK(*rx.try_recv() == 2);
    REQUIRE(t.done());
    t.result();
}
