// Stop requests against threads blocked in the blocking API, at a known point: only once the
// call's operation is linked as a waiter (tests/cochan/blocking.cpp has the rest of the
// blocking API).
//
// Its own executable: it defines COCHAN_DETAIL_BLOCKING_LINKED, a hook in every blocking call
// after it linked and before it waits, for every cochan header it includes (the other test
// executables keep the default no-op). The test thread waits for the hook instead of sleeping.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace blocking_test {
// A mutex and a condition variable, not std::atomic::wait: libstdc++'s atomic wait can miss a
// notification where it has no futex (MinGW-w64, CI's mingw stage).
inline std::mutex linked_mutex;
inline std::condition_variable linked_changed;
/// How many blocking calls have linked their operation so far (any thread). Read and written
/// under linked_mutex.
inline int linked_count = 0;
inline void at_linked() noexcept {
    const std::lock_guard lock(linked_mutex);
    ++linked_count;
    linked_changed.notify_all();
}
/// Blocks until `n` calls have linked.
inline void wait_linked(int n) noexcept {
    std::unique_lock lock(linked_mutex);
    linked_changed.wait(lock, [n] { return linked_count >= n; });
}
/// Starts counting from 0.
inline void reset_linked() noexcept {
    const std::lock_guard lock(linked_mutex);
    linked_count = 0;
}
/// How many blocking calls have linked so far.
inline int linked() noexcept {
    const std::lock_guard lock(linked_mutex);
    return linked_count;
}
} // namespace blocking_test

#define COCHAN_DETAIL_BLOCKING_LINKED() ::blocking_test::at_linked()

#include <catch2/catch.hpp>
#include <cochan/cochan.hpp>

using blocking_test::linked;
using blocking_test::reset_linked;
using blocking_test::wait_linked;

TEST_CASE("blocking: a stop request cancels a receive that is waiting", "[cancellation-hand-off]") {
    // The receive links (the channel is empty), then the stop arrives from another thread: the
    // stop callback must unlink it and wake the thread with `cancelled`. A callback that did
    // not unlink or did not signal leaves the thread blocked for good (CTest's timeout fails
    // it); one that completed it with another outcome fails the check.
    reset_linked();
    auto channel = cochan::mpmc::bounded<int>(1);
    auto& tx = channel.first;
    auto& rx = channel.second;
    cochan::default_stop_source stop;
    std::atomic<int> outcome{-1};
    std::thread receiver([&] {
        auto r = rx.blocking_recv(stop.get_token());
        outcome = r ? 100 : static_cast<int>(r.error());
    });
    wait_linked(1);
    stop.request_stop();
    receiver.join();
    CHECK(outcome == static_cast<int>(cochan::recv_errc::cancelled));
    // The cancelled receive left nothing linked: the next value is buffered, not granted to it.
    REQUIRE(tx.try_send(7));
    CHECK(rx.size() == 1);
    CHECK(*rx.try_recv() == 7);
}

TEST_CASE("blocking: a stop request cancels a send that is waiting and hands its value back",
          "[cancellation-hand-off]") {
    reset_linked();
    auto channel = cochan::mpmc::bounded<int>(1);
    auto& tx = channel.first;
    auto& rx = channel.second;
    REQUIRE(tx.try_send(1)); // full: the blocking send must wait
    cochan::default_stop_source stop;
    std::atomic<int> value_back{-1};
    std::thread sender([&] {
        auto r = tx.blocking_send(2, stop.get_token());
        value_back =
            r ? 100 : (r.error().reason == cochan::send_errc::cancelled ? r.error().value : -2);
    });
    wait_linked(1);
    stop.request_stop();
    sender.join();
    CHECK(value_back == 2);
    // The cancelled send left the buffer as it was: its value did not slip in.
    CHECK(*rx.try_recv() == 1);
    CHECK(rx.try_recv().error() == cochan::recv_errc::empty);
}

TEST_CASE("blocking: a stop requested before the call cancels it without linking",
          "[cancellation-hand-off]") {
    reset_linked();
    auto [tx, rx] = cochan::spmc::bounded<int>(1);
    cochan::default_stop_source stop;
    stop.request_stop();
    auto r = rx.blocking_recv(stop.get_token());
    REQUIRE(!r);
    CHECK(r.error() == cochan::recv_errc::cancelled);
    REQUIRE(tx.try_send(1));
    auto s = tx.blocking_send(2, stop.get_token());
    REQUIRE(!s);
    CHECK(s.error().reason == cochan::send_errc::cancelled);
    CHECK(s.error().value == 2);
    CHECK(linked() == 0); // neither call linked
    CHECK(*rx.try_recv() == 1);
}

TEST_CASE("blocking: a stop requested before the call cancels it even when it could complete",
          "[cancellation-hand-off]") {
    // The first step (a value buffered, a cell free) must not run for a stopped token: the
    // call is cancelled, takes nothing and hands the value back, as a coroutine's would be.
    reset_linked();
    auto [tx, rx] = cochan::spmc::bounded<int>(2);
    REQUIRE(tx.try_send(1));
    cochan::default_stop_source stop;
    stop.request_stop();
    auto r = rx.blocking_recv(stop.get_token());
    REQUIRE(!r);
    CHECK(r.error() == cochan::recv_errc::cancelled);
    auto s = tx.blocking_send(2, stop.get_token()); // one cell free
    REQUIRE(!s);
    CHECK(s.error().reason == cochan::send_errc::cancelled);
    CHECK(s.error().value == 2);
    CHECK(linked() == 0);
    CHECK(*rx.try_recv() == 1);
    CHECK(rx.try_recv().error() == cochan::recv_errc::empty);
}

TEST_CASE("blocking: with a token that can stop, a call that need not wait completes at once",
          "[cancellation-hand-off]") {
    // A value buffered, a cell free, an ended channel: each call returns without linking, and
    // the same token, stopped afterwards, still cancels a call that waits.
    reset_linked();
    auto [tx, rx] = cochan::spmc::bounded<int>(1);
    cochan::default_stop_source stop;
    REQUIRE(tx.blocking_send(1, stop.get_token()));
    auto r = rx.blocking_recv(stop.get_token());
    REQUIRE(r);
    CHECK(*r == 1);
    CHECK(linked() == 0);
    REQUIRE(tx.try_send(2));
    std::atomic<int> outcome{-1};
    auto& sending = tx;      // clang 14 cannot capture a structured binding
    std::thread sender([&] { // the channel is full: this send links and waits
        auto s = sending.blocking_send(3, stop.get_token());
        outcome = s ? 0 : static_cast<int>(s.error().reason) + 1;
    });
    wait_linked(1);
    stop.request_stop();
    sender.join();
    CHECK(outcome == static_cast<int>(cochan::send_errc::cancelled) + 1);
    CHECK(*rx.try_recv() == 2);
    tx.close();
    cochan::default_stop_source live;
    auto end = rx.blocking_recv(live.get_token());
    REQUIRE(!end);
    CHECK(end.error() == cochan::recv_errc::disconnected);
    CHECK(linked() == 1);
}

TEST_CASE("blocking: a deadline call that waits, woken by a value before the deadline",
          "[deadlines]") {
    // blocking_recv_until links and waits like blocking_recv: a value sent once it waits is
    // granted to it (no timeout, no cancellation).
    reset_linked();
    auto [tx, rx] = cochan::spmc::unbounded<int>();
    std::atomic<int> got{-1};
    std::thread receiver([&, rx = rx] {
        auto r = rx.blocking_recv_for(std::chrono::hours(1));
        got = r ? *r : -static_cast<int>(r.error()) - 2;
    });
    wait_linked(1);
    REQUIRE(tx.send(5));
    receiver.join();
    CHECK(got == 5);
}

TEST_CASE("blocking: a huge timeout waits for the value instead of overflowing", "[deadlines]") {
    // `_for(d)` is `_until(now() + d)`: with `seconds::max()` that sum overflowed into the past,
    // so the call (already linked) timed out at once. The deadline saturates instead: each call
    // below is still waiting when the value (or the cell) comes, once it has linked.
    reset_linked();
    constexpr auto forever = std::chrono::seconds::max();
    auto channel = cochan::spmc::bounded<int>(1); // not a structured binding: captured below
    auto& tx = channel.first;
    auto& rx = channel.second;
    std::atomic<int> got{-1};
    std::thread receiver([&, rx = rx] {
        auto r = rx.blocking_recv_for(forever);
        got = r ? *r : -static_cast<int>(r.error()) - 2;
    });
    wait_linked(1);
    REQUIRE(tx.try_send(5));
    receiver.join();
    CHECK(got == 5);

    REQUIRE(tx.try_send(6)); // full: the send below waits
    std::atomic<int> sent{-1};
    std::thread sender([&] {
        auto r = tx.blocking_send_for(7, std::chrono::nanoseconds::max());
        sent = r ? 1 : -static_cast<int>(r.error().reason) - 2;
    });
    wait_linked(2);
    CHECK(*rx.try_recv() == 6); // frees the cell the send waits for
    sender.join();
    CHECK(sent == 1);
    CHECK(*rx.try_recv() == 7);

    auto [otx, orx] = cochan::oneshot<int>();
    std::thread oneshot_receiver([&, orx = std::move(orx)]() mutable {
        auto r = orx.blocking_recv_for(forever);
        got = r ? *r : -static_cast<int>(r.error()) - 2;
    });
    wait_linked(3);
    REQUIRE(otx.send(8));
    oneshot_receiver.join();
    CHECK(got == 8);
}

TEST_CASE("blocking: the caller's token object may be destroyed once the call waits",
          "[cancellation-hand-off]") {
    // The blocking calls take the token by reference and read it only before they wait (their
    // first step, and start() registering the stop callback, which holds its own reference to
    // the stop state). Here the caller's token object is freed while each call waits, then the
    // stop is requested: a call that read its token after waiting would read freed memory
    // (AddressSanitizer reports it) instead of completing `cancelled`.
    reset_linked();
    auto [tx, rx] = cochan::mpmc::bounded<int>(1);
    cochan::default_stop_source stop;
    auto token = std::make_unique<cochan::default_stop_token>(stop.get_token());
    std::atomic<int> outcome{-1};
    std::thread receiver([&, rx = rx] {
        auto r = rx.blocking_recv(*token);
        outcome = r ? 100 : static_cast<int>(r.error());
    });
    wait_linked(1);
    token.reset(); // the receive waits: it no longer reads the caller's object
    stop.request_stop();
    receiver.join();
    CHECK(outcome == static_cast<int>(cochan::recv_errc::cancelled));

    REQUIRE(tx.try_send(1)); // full: the send below waits
    cochan::default_stop_source stop_send;
    token = std::make_unique<cochan::default_stop_token>(stop_send.get_token());
    std::atomic<int> value_back{-1};
    std::thread sender([&, tx = tx] {
        auto r = tx.blocking_send(2, *token);
        value_back =
            r ? 100 : (r.error().reason == cochan::send_errc::cancelled ? r.error().value : -2);
    });
    wait_linked(2);
    token.reset();
    stop_send.request_stop();
    sender.join();
    CHECK(value_back == 2);
    CHECK(*rx.try_recv() == 1);

    auto [once_tx, once_rx] = cochan::oneshot<int>(); // nothing sent: the receive waits
    cochan::default_stop_source stop_once;
    token = std::make_unique<cochan::default_stop_token>(stop_once.get_token());
    std::atomic<int> once_outcome{-1};
    auto& once = once_rx; // clang 14 cannot capture a structured binding
    std::thread once_receiver([&] {
        auto r = once.blocking_recv(*token);
        once_outcome = r ? 100 : static_cast<int>(r.error());
    });
    wait_linked(3);
    token.reset();
    stop_once.request_stop();
    once_receiver.join();
    CHECK(once_outcome == static_cast<int>(cochan::recv_errc::cancelled));
    REQUIRE(once_tx.send(4)); // the cancelled receive left the value to a later one
    CHECK(*once_rx.try_recv() == 4);
}
