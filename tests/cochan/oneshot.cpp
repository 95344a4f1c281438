// One-shot channels (cochan/oneshot.hpp): one value from one sender to one receiver, on the
// channels' operation-state protocol. Each test pins what a broken one-shot would get wrong: a
// value lost or delivered twice, a waiter never woken or resumed in the wrong place, a second
// send accepted, a value left alive (or destroyed twice) when an end goes away.
// Allocation counts and throwing moves are in faults.cpp, which owns the allocation hook.
#include <cochan/cochan.hpp>

#include "support/counted.hpp"
#include "support/manual_scheduler.hpp"
#include "support/task.hpp"
#include "support/thread_pool.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

using namespace cochan_test;
using namespace std::chrono_literals;

namespace {

using sender = cochan::oneshot_sender<int>;
using receiver = cochan::oneshot_receiver<int>;

template <class Rx> task<cochan::recv_result<typename Rx::value_type>> receive(Rx& rx) {
    auto r = co_await rx.recv();
    co_return std::move(r);
}

template <class Rx>
task<cochan::recv_result<typename Rx::value_type>> receive(Rx& rx,
                                                           cochan::default_stop_token token) {
    auto r = co_await rx.recv(std::move(token));
    co_return std::move(r);
}

template <class Rx>
task<cochan::recv_result<typename Rx::value_type>> receive_on(Rx& rx, manual_scheduler& s) {
    auto r = co_await rx.recv().resume_on(s.executor());
    co_return std::move(r);
}

} // namespace

// ---- the value ----------------------------------------------------------------------------------

TEST_CASE("oneshot: a value sent before the receive is received once, then disconnected",
          "[oneshot][exactly-once]") {
    auto [tx, rx] = cochan::oneshot<int>();
    CHECK_FALSE(tx.is_closed());
    CHECK_FALSE(rx.is_closed());
    REQUIRE(tx.send(7));
    CHECK(tx.is_closed());       // the one value is sent: no send can succeed any more
    CHECK_FALSE(rx.is_closed()); // but the value waits to be received
    auto first = receive(rx);
    REQUIRE(first.done()); // the value was there: it did not wait
    REQUIRE(first.result());
    CHECK(*first.result() == 7);
    CHECK(rx.is_closed());
    // Received once: every later receive, of every kind, reports disconnected.
    auto second = receive(rx);
    REQUIRE(second.done());
    REQUIRE_FALSE(second.result());
    CHECK(second.result().error() == cochan::recv_errc::disconnected);
    CHECK(rx.try_recv().error() == cochan::recv_errc::disconnected);
    CHECK(rx.blocking_recv().error() == cochan::recv_errc::disconnected);
}

TEST_CASE("oneshot: send resumes a waiting receive inline, before send returns",
          "[oneshot][where-resumed]") {
    auto [tx, rx] = cochan::oneshot<int>();
    bool inside_send = false;
    bool resumed_inside_send = false;
    std::thread::id resumed_on;
    auto waiting = [](receiver& rx, bool& inside, bool& seen,
                      std::thread::id& on) -> task<cochan::recv_result<int>> {
        auto r = co_await rx.recv();
        seen = inside;
        on = std::this_thread::get_id();
        co_return r;
    }(rx, inside_send, resumed_inside_send, resumed_on);
    REQUIRE_FALSE(waiting.done());
    CHECK_FALSE(rx.is_closed());
    inside_send = true;
    REQUIRE(tx.send(42));
    inside_send = false;
    REQUIRE(waiting.done());
    CHECK(resumed_inside_send);
    CHECK(resumed_on == std::this_thread::get_id());
    REQUIRE(waiting.result());
    CHECK(*waiting.result() == 42);
    // The value was granted to the waiter, not stored as well: nothing is left to take.
    CHECK(rx.try_recv().error() == cochan::recv_errc::disconnected);
}

TEST_CASE("oneshot: resume_on posts the granted receive once, and it resumes where posted",
          "[oneshot][resumption][where-resumed][no-barging]") {
    auto [tx, rx] = cochan::oneshot<int>();
    manual_scheduler sched;
    auto waiting = receive_on(rx, sched);
    REQUIRE_FALSE(waiting.done());
    CHECK(sched.posted_total() == 0);
    REQUIRE(tx.send(5));
    CHECK_FALSE(waiting.done()); // not inline: posted
    CHECK(sched.posted_total() == 1);
    // Granted, not stored: a try_recv in the window before it resumes cannot take it.
    CHECK(rx.try_recv().error() == cochan::recv_errc::disconnected);
    CHECK(sched.run_all() == 1);
    REQUIRE(waiting.done());
    REQUIRE(waiting.result());
    CHECK(*waiting.result() == 5);
}

TEST_CASE("oneshot: resume_on on a receive that completes at once does not post",
          "[oneshot][resumption][where-resumed]") {
    auto [tx, rx] = cochan::oneshot<int>();
    REQUIRE(tx.send(6));
    manual_scheduler sched;
    auto r = receive_on(rx, sched);
    REQUIRE(r.done());
    CHECK(sched.posted_total() == 0);
    CHECK(*r.result() == 6);
}

TEST_CASE("oneshot: the value sent is moved, never copied, and destroyed once",
          "[oneshot][exactly-once]") {
    counted::reset();
    {
        auto [tx, rx] = cochan::oneshot<counted>();
        auto waiting = receive(rx);
        REQUIRE(tx.send(counted(3)));
        REQUIRE(waiting.done());
        CHECK(waiting.result()->value == 3);
    }
    CHECK(counted::copied == 0);
    CHECK(counted::live() == 0);
}

// ---- a second send ------------------------------------------------------------------------------

TEST_CASE("oneshot: a second send fails full with its value back", "[oneshot]") {
    auto [tx, rx] = cochan::oneshot<int>();
    SECTION("the first value is stored") {
        REQUIRE(tx.send(1));
        auto again = tx.send(2);
        REQUIRE_FALSE(again);
        CHECK(again.error().reason == cochan::send_errc::full);
        CHECK(again.error().value == 2);
        CHECK(*rx.try_recv() == 1); // the first value, not overwritten
    }
    SECTION("the first value was granted to a waiting receive") {
        auto waiting = receive(rx);
        REQUIRE(tx.send(1));
        REQUIRE(waiting.done());
        auto again = tx.send(2); // the one value is out: the slot does not reopen
        REQUIRE_FALSE(again);
        CHECK(again.error().reason == cochan::send_errc::full);
        CHECK(again.error().value == 2);
        CHECK(*waiting.result() == 1);
    }
    // After the value was taken it stays full; once closed, the sender reports disconnected.
    auto third = tx.send(3);
    REQUIRE_FALSE(third);
    CHECK(third.error().reason == cochan::send_errc::full);
    CHECK(rx.try_recv().error() == cochan::recv_errc::disconnected);
    tx.close();
    auto fourth = tx.send(4);
    REQUIRE_FALSE(fourth);
    CHECK(fourth.error().reason == cochan::send_errc::disconnected);
    CHECK(fourth.error().value == 4);
}

// ---- the sender goes ----------------------------------------------------------------------------

TEST_CASE("oneshot: a sender gone without sending means disconnected",
          "[oneshot][close][last-sender-gone]") {
    const bool by_close = GENERATE(false, true);
    CAPTURE(by_close);
    auto [tx, rx] = cochan::oneshot<int>();
    std::optional<sender> tx_slot(std::move(tx));
    CHECK(rx.try_recv().error() == cochan::recv_errc::empty); // the sender may still send
    if (by_close) {
        tx_slot->close();
        CHECK(tx_slot->is_closed());
        auto late = tx_slot->send(9); // a closed sender sends nothing
        REQUIRE_FALSE(late);
        CHECK(late.error().reason == cochan::send_errc::disconnected);
        CHECK(late.error().value == 9);
        tx_slot->close(); // idempotent
    } else {
        tx_slot.reset();
    }
    CHECK(rx.is_closed());
    CHECK(rx.try_recv().error() == cochan::recv_errc::disconnected);
    auto r = receive(rx);
    REQUIRE(r.done()); // nothing will come: it does not wait
    CHECK(r.result().error() == cochan::recv_errc::disconnected);
    tx_slot.reset(); // destroying a closed sender disconnects nothing twice
}

TEST_CASE("oneshot: the sender's departure wakes a waiting receive with disconnected",
          "[oneshot][close][last-sender-gone][where-resumed]") {
    const bool posted = GENERATE(false, true);
    const bool by_close = GENERATE(false, true);
    CAPTURE(posted, by_close);
    auto [tx, rx] = cochan::oneshot<int>();
    std::optional<sender> tx_slot(std::move(tx));
    manual_scheduler sched;
    auto waiting = posted ? receive_on(rx, sched) : receive(rx);
    REQUIRE_FALSE(waiting.done());
    if (by_close) {
        tx_slot->close();
    } else {
        tx_slot.reset();
    }
    if (posted) {
        CHECK_FALSE(waiting.done());
        CHECK(sched.run_all() == 1);
    }
    REQUIRE(waiting.done()); // inline: before close() or the destructor returned
    CHECK(waiting.result().error() == cochan::recv_errc::disconnected);
}

TEST_CASE("oneshot: a value sent before the sender goes is still received",
          "[oneshot][close][last-sender-gone]") {
    auto [tx, rx] = cochan::oneshot<int>();
    std::optional<sender> tx_slot(std::move(tx));
    REQUIRE(tx_slot->send(8));
    tx_slot.reset();
    CHECK_FALSE(rx.is_closed());
    auto r = receive(rx);
    REQUIRE(r.done());
    REQUIRE(r.result());
    CHECK(*r.result() == 8);
    CHECK(rx.is_closed());
}

// ---- the receiver goes --------------------------------------------------------------------------

TEST_CASE("oneshot: a receiver gone makes send fail with its value back",
          "[oneshot][close][last-receiver-gone]") {
    counted::reset();
    {
        auto [tx, rx] = cochan::oneshot<counted>();
        std::optional<cochan::oneshot_receiver<counted>> rx_slot(std::move(rx));
        CHECK_FALSE(tx.is_closed());
        rx_slot.reset();
        CHECK(tx.is_closed()); // a server can skip a reply nobody waits for
        auto r = tx.send(counted(2));
        REQUIRE_FALSE(r);
        CHECK(r.error().reason == cochan::send_errc::disconnected);
        CHECK(r.error().value.value == 2);
        CHECK(counted::live() == 1); // the value is the caller's again, not the channel's
    }
    CHECK(counted::live() == 0);
}

TEST_CASE("oneshot: a value stored when the receiver goes is destroyed then, exactly once",
          "[oneshot][close][last-receiver-gone][exactly-once]") {
    counted::reset();
    {
        auto [tx, rx] = cochan::oneshot<counted>();
        std::optional<cochan::oneshot_receiver<counted>> rx_slot(std::move(rx));
        REQUIRE(tx.send(counted(1)));
        CHECK(counted::live() == 1); // stored in the one-shot
        rx_slot.reset();
        CHECK(counted::live() == 0);  // destroyed with the receiver, while the sender lives on
        auto r = tx.send(counted(2)); // receiver gone: disconnected wins over "already sent"
        REQUIRE_FALSE(r);
        CHECK(r.error().reason == cochan::send_errc::disconnected);
    }
    CHECK(counted::live() == 0); // and not destroyed a second time by the shared state
    CHECK(counted::copied == 0);
}

TEST_CASE("oneshot: a receive waiting when its receiver is destroyed completes disconnected",
          "[oneshot][close][last-receiver-gone]") {
    auto [tx, rx] = cochan::oneshot<int>();
    std::optional<receiver> rx_slot(std::move(rx));
    auto waiting = receive(*rx_slot);
    REQUIRE_FALSE(waiting.done());
    rx_slot.reset();
    REQUIRE(waiting.done());
    CHECK(waiting.result().error() == cochan::recv_errc::disconnected);
    auto r = tx.send(1);
    REQUIRE_FALSE(r);
    CHECK(r.error().reason == cochan::send_errc::disconnected);
}

// ---- cancellation -------------------------------------------------------------------------------

TEST_CASE("oneshot: a stop request cancels a waiting receive, which leaves no trace",
          "[oneshot][cancel][cancellation-hand-off][where-resumed]") {
    auto [tx, rx] = cochan::oneshot<int>();
    cochan::default_stop_source stop;
    auto waiting = receive(rx, stop.get_token());
    REQUIRE_FALSE(waiting.done());
    stop.request_stop();
    REQUIRE(waiting.done()); // resumed inside request_stop(), on this thread
    CHECK(waiting.result().error() == cochan::recv_errc::cancelled);
    CHECK_FALSE(rx.is_closed());
    // The cancelled receive is unlinked: the value is stored, not granted to it, and a new
    // receive (no overlap with the cancelled one) gets it.
    REQUIRE(tx.send(4));
    auto next = receive(rx);
    REQUIRE(next.done());
    CHECK(*next.result() == 4);
}

TEST_CASE("oneshot: a token already stopped cancels without taking the value",
          "[oneshot][cancel][cancellation-hand-off]") {
    auto [tx, rx] = cochan::oneshot<int>();
    REQUIRE(tx.send(5));
    cochan::default_stop_source stop;
    stop.request_stop();
    auto r = receive(rx, stop.get_token());
    REQUIRE(r.done());
    CHECK(r.result().error() == cochan::recv_errc::cancelled);
    CHECK(rx.blocking_recv(stop.get_token()).error() == cochan::recv_errc::cancelled);
    CHECK(*rx.try_recv() == 5); // still there
}

TEST_CASE("oneshot: a stop request after the grant does not take the value away",
          "[oneshot][cancel][cancellation-hand-off]") {
    auto [tx, rx] = cochan::oneshot<int>();
    manual_scheduler sched;
    cochan::default_stop_source stop;
    auto waiting = [](receiver& rx, cochan::default_stop_token token,
                      manual_scheduler& s) -> task<cochan::recv_result<int>> {
        auto r = co_await rx.recv(std::move(token)).resume_on(s.executor());
        co_return r;
    }(rx, stop.get_token(), sched);
    REQUIRE(tx.send(6)); // granted; the resumption is posted
    stop.request_stop(); // too late: the grant won under the lock
    CHECK(sched.run_all() == 1);
    REQUIRE(waiting.done());
    REQUIRE(waiting.result());
    CHECK(*waiting.result() == 6);
}

// ---- a granted coroutine destroyed before it resumed --------------------------------------------

TEST_CASE("oneshot: a granted receive destroyed before it resumed gives the value back",
          "[oneshot][resumption][cancellation-hand-off][exactly-once]") {
    counted::reset();
    {
        auto [tx, rx] = cochan::oneshot<counted>();
        manual_scheduler sched;
        std::optional<task<cochan::recv_result<counted>>> doomed;
        doomed.emplace(receive_on(rx, sched));
        REQUIRE(tx.send(counted(11))); // granted to `doomed`, its resumption posted
        CHECK(rx.is_closed());         // the value is out
        sched.discard_all();           // the executor drops the resumption...
        doomed.reset();                // ...and the frame is destroyed: the value comes back
        CHECK(counted::live() == 1);
        CHECK_FALSE(rx.is_closed());
        auto again = receive(rx); // the receiver's next receive gets it, once
        REQUIRE(again.done());
        REQUIRE(again.result());
        CHECK(again.result()->value == 11);
        CHECK(rx.try_recv().error() == cochan::recv_errc::disconnected);
    }
    CHECK(counted::live() == 0);
}

TEST_CASE("oneshot: a granted receive destroyed after its receiver destroys the value once",
          "[oneshot][resumption][exactly-once]") {
    counted::reset();
    {
        auto [tx, rx] = cochan::oneshot<counted>();
        std::optional<cochan::oneshot_receiver<counted>> rx_slot(std::move(rx));
        manual_scheduler sched;
        std::optional<task<cochan::recv_result<counted>>> doomed;
        doomed.emplace(receive_on(*rx_slot, sched));
        REQUIRE(tx.send(counted(12)));
        sched.discard_all();
        rx_slot.reset();             // the receiver goes while its grant is in the frame
        CHECK(counted::live() == 1); // the grant is the frame's, not destroyed with the receiver
        doomed.reset();              // given back with nobody to take it: destroyed, once
        CHECK(counted::live() == 0);
    }
    CHECK(counted::live() == 0);
}

// One thread: a controller resumed inside the trampoline sends (the receiver's resumption is
// queued on the trampoline, not run) and then destroys the granted receiver's coroutine.
TEST_CASE("oneshot: a granted receive destroyed while queued on the trampoline gives the value "
          "back and is never resumed",
          "[oneshot][resumption][cancellation-hand-off][where-resumed]") {
    counted::reset();
    {
        auto [ctl_tx, ctl_rx] = cochan::spmc::unbounded<int>();
        auto [tx, rx] = cochan::oneshot<counted>();
        std::optional<task<cochan::recv_result<counted>>> consumer;
        consumer.emplace(receive(rx));
        bool queued_not_run = false;
        auto controller = [](auto& ctl_rx, auto& tx, auto& consumer, bool& queued) -> task<void> {
            auto go = co_await ctl_rx.recv();
            REQUIRE(go);
            REQUIRE(tx.send(counted(13))); // grants; the consumer's resumption is queued
            queued = !consumer->done();
            consumer.reset(); // withdrawn from the trampoline, the value given back
        }(ctl_rx, tx, consumer, queued_not_run);
        REQUIRE(ctl_tx.send(1)); // resumes the controller inline, through the trampoline
        REQUIRE(controller.done());
        CHECK(queued_not_run);
        auto r = rx.try_recv();
        REQUIRE(r);
        CHECK(r->value == 13);
    }
    CHECK(counted::live() == 0);
}

// ---- try_recv -----------------------------------------------------------------------------------

TEST_CASE("oneshot: try_recv is empty, then the value, then disconnected", "[oneshot]") {
    auto [tx, rx] = cochan::oneshot<int>();
    CHECK(rx.try_recv().error() == cochan::recv_errc::empty);
    CHECK(rx.try_recv().error() == cochan::recv_errc::empty); // an empty try takes nothing
    REQUIRE(tx.send(3));
    auto r = rx.try_recv();
    REQUIRE(r);
    CHECK(*r == 3);
    CHECK(rx.try_recv().error() == cochan::recv_errc::disconnected);
    CHECK(rx.is_closed());
}

TEST_CASE("oneshot: try_recv does not take a value granted to a waiting receive",
          "[oneshot][no-barging]") {
    auto [tx, rx] = cochan::oneshot<int>();
    manual_scheduler sched;
    auto waiting = receive_on(rx, sched);
    CHECK(rx.try_recv().error() == cochan::recv_errc::empty); // a try while one waits is fine
    REQUIRE(tx.send(1));
    CHECK_FALSE(rx.try_recv()); // granted: not for try_recv
    sched.run_all();
    CHECK(*waiting.result() == 1);
}

// ---- threads ------------------------------------------------------------------------------------

TEST_CASE("oneshot: blocking_recv on another thread gets the value sent by this one",
          "[oneshot][blocking][thread-safety]") {
    // Whether the send lands before or while the thread waits, it gets the value once.
    for (int round = 0; round < 200; ++round) {
        auto [tx, rx] = cochan::oneshot<int>();
        std::optional<cochan::recv_result<int>> got; // written by the thread, read after join
        std::thread t([&got, rx = std::move(rx)]() mutable { got.emplace(rx.blocking_recv()); });
        const auto sent = tx.send(round);
        t.join();
        REQUIRE(sent);
        REQUIRE(got.has_value());
        REQUIRE(got->has_value());
        CHECK(**got == round);
    }
}

TEST_CASE("oneshot: blocking_recv is woken by the sender's departure or a stop request on "
          "another thread",
          "[oneshot][blocking][last-sender-gone][cancellation-hand-off]") {
    const bool by_stop = GENERATE(false, true);
    CAPTURE(by_stop);
    for (int round = 0; round < 50; ++round) {
        auto [tx, rx] = cochan::oneshot<int>();
        cochan::default_stop_source stop;
        std::optional<cochan::recv_result<int>> got;
        std::thread t([&got, &stop, rx = std::move(rx)]() mutable {
            got.emplace(rx.blocking_recv(stop.get_token()));
        });
        if (by_stop) {
            stop.request_stop();
        } else {
            sender gone(std::move(tx)); // destroyed at the end of this block
        }
        t.join();
        REQUIRE(got.has_value());
        REQUIRE_FALSE(got->has_value());
        CHECK(got->error() ==
              (by_stop ? cochan::recv_errc::cancelled : cochan::recv_errc::disconnected));
    }
}

TEST_CASE("oneshot: blocking_recv_for times out with timed_out and leaves no trace",
          "[oneshot][blocking][deadlines]") {
    auto [tx, rx] = cochan::oneshot<int>();
    auto r = rx.blocking_recv_for(5ms);
    REQUIRE_FALSE(r);
    CHECK(r.error() == cochan::recv_errc::timed_out);
    CHECK(rx.blocking_recv_until(std::chrono::steady_clock::now() - 1s).error() ==
          cochan::recv_errc::timed_out);
    // The timed-out receives are no longer waiting: the value is stored, not granted to one.
    REQUIRE(tx.send(7));
    auto late = rx.blocking_recv_until(std::chrono::steady_clock::now() - 1s);
    REQUIRE(late); // a passed deadline still takes a value already sent
    CHECK(*late == 7);
}

namespace {

// A request carries its own reply channel: the server answers 3x + 1 through it.
struct request {
    int x = 0;
    cochan::oneshot_sender<long> reply;
};

long answer(int x) {
    return 3L * x + 1;
}

// Serves requests until every requester is gone.
// By value: the server owns its receiver, whose destruction on return is its disconnection.
// NOLINTNEXTLINE(performance-unnecessary-value-param)
void serve(cochan::mpmc::unbounded_receiver<request> requests) {
    while (auto r = requests.blocking_recv()) {
        auto sent = r->reply.send(answer(r->x));
        (void)sent; // a requester that gave up is not an error
    }
}

constexpr int round_trips = 1000;

long expected_checksum() {
    long sum = 0;
    for (int i = 0; i < round_trips; ++i) sum += answer(i);
    return sum;
}

// The client as a coroutine resumed on a pool: each reply resumes it there, and it sends the
// next request from the pool thread. Writes its checksum, then counts the latch down.
detached request_replies(cochan::mpmc::unbounded_sender<request>& requests, thread_pool& pool,
                         long& checksum, completion_latch& done) {
    long sum = 0;
    for (int i = 0; i < round_trips; ++i) {
        auto [reply_tx, reply_rx] = cochan::oneshot<long>();
        request q{i, std::move(reply_tx)}; // named first: see "Known compiler issues"
        if (!requests.send(std::move(q))) break;
        auto r = co_await reply_rx.recv().resume_on(pool.executor());
        if (!r) break;
        sum += *r;
    }
    checksum = sum;
    done.count_down(); // last: the test thread reads `checksum` once this returns
}

} // namespace

TEST_CASE("oneshot: request/reply across threads, 1,000 round trips",
          "[oneshot][threads][thread-safety]") {
    // Declared first, so it outlives the server thread: the server's last reply may still be
    // inside the pool's post() when the client coroutine, already resumed, finishes.
    thread_pool pool(1);
    auto [requests_tx, requests_rx] = cochan::mpmc::unbounded<request>();
    std::thread server(serve, std::move(requests_rx));
    struct stop_server { // also when a REQUIRE below fails
        cochan::mpmc::unbounded_sender<request>& requests;
        std::thread& server;
        ~stop_server() {
            requests.close(); // the server sees disconnected and returns
            server.join();
        }
    } stop{requests_tx, server};
    long checksum = 0;
    SECTION("a blocked thread waits for each reply") {
        for (int i = 0; i < round_trips; ++i) {
            auto [reply_tx, reply_rx] = cochan::oneshot<long>();
            request q{i, std::move(reply_tx)};
            auto sent = requests_tx.send(std::move(q));
            REQUIRE(sent);
            auto r = reply_rx.blocking_recv();
            REQUIRE(r);
            checksum += *r;
        }
    }
    SECTION("a coroutine resumed on a thread pool waits for each reply") {
        completion_latch done(1);
        request_replies(requests_tx, pool, checksum, done);
        REQUIRE(done.wait_for(60s));
    }
    CHECK(checksum == expected_checksum());
}

// ---- structure ----------------------------------------------------------------------------------

TEST_CASE("oneshot: the endpoints are one pointer and move-only", "[oneshot]") {
    STATIC_REQUIRE(sizeof(cochan::oneshot_sender<int>) == sizeof(void*));
    STATIC_REQUIRE(sizeof(cochan::oneshot_receiver<int>) == sizeof(void*));
    STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<cochan::oneshot_sender<int>>);
    STATIC_REQUIRE_FALSE(std::is_copy_assignable_v<cochan::oneshot_sender<int>>);
    STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<cochan::oneshot_receiver<int>>);
    STATIC_REQUIRE_FALSE(std::is_copy_assignable_v<cochan::oneshot_receiver<int>>);
    STATIC_REQUIRE(std::is_nothrow_move_constructible_v<cochan::oneshot_sender<int>>);
    STATIC_REQUIRE(std::is_nothrow_move_assignable_v<cochan::oneshot_receiver<int>>);
    // The value lives in the shared state itself (no ring, no segment): it grows with T.
    STATIC_REQUIRE(sizeof(cochan::detail::oneshot_core<std::array<char, 4096>>) >= 4096);
}

TEST_CASE("oneshot: move assignment disconnects the endpoint assigned over",
          "[oneshot][last-sender-gone]") {
    auto [tx1, rx1] = cochan::oneshot<int>();
    auto [tx2, rx2] = cochan::oneshot<int>();
    auto waiting = receive(rx1);
    tx1 = std::move(tx2); // tx1's first one-shot loses its sender: its receive is woken
    REQUIRE(waiting.done());
    CHECK(waiting.result().error() == cochan::recv_errc::disconnected);
    REQUIRE(tx1.send(2)); // tx1 now sends on the second one-shot
    CHECK(*rx2.try_recv() == 2);
    rx1 = std::move(rx2); // and a receiver, likewise
    CHECK(rx1.try_recv().error() == cochan::recv_errc::disconnected);
}
