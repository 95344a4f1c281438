// Fault injection: a move that throws at every step of each operation (throwing_move with
// throw_after = 0, 1, 2, ... until the operation completes without reaching the fault), and an
// allocation that fails at the k-th call (a replaced global operator new, armed per thread).
// Each scenario checks the guarantee docs/design.md ("Exception safety") documents for the
// operation, that no other value is lost or duplicated, and that the channel stays usable.
#include <cochan/cochan.hpp>

#include "support/alloc_hook.hpp"
#include "support/channels.hpp"
#include "support/counted.hpp"
#include "support/manual_scheduler.hpp"
#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

using namespace cochan_test;

namespace {

// ---- helpers ---------------------------------------------------------------------------------

// The fault: the (k + 1)-th move from now throws std::runtime_error("throwing_move").
void arm(int k) {
    throwing_move::throw_after = k;
}
// Disarms; true if the fault fired (throwing_move resets the budget to -1 when it throws).
bool disarm() {
    const bool fired = throwing_move::throw_after.load() == -1;
    throwing_move::throw_after = -1;
    return fired;
}

// Runs `scenario(k)` for k = 0, 1, 2, ... until a run in which the fault did not fire: by then
// every move the operation makes has thrown once. Returns the number of faults injected.
template <class Scenario> int for_every_fault(Scenario scenario) {
    int faults = 0;
    for (int k = 0; k < 64; ++k) {
        throwing_move::reset();
        CAPTURE(k);
        const bool fired = scenario(k);
        throwing_move::throw_after = -1;
        CHECK(throwing_move::live() == 0); // nothing leaked, nothing destroyed twice
        if (!fired) break;
        ++faults;
    }
    CHECK(faults > 0); // the scenario reached at least one move
    return faults;
}

// Sends without waiting and without moving the argument first: the prvalue initialises the
// parameter, so every move counted is the channel's.
template <class Tx> auto send_now(Tx& tx, int v) {
    if constexpr (requires { tx.capacity(); }) {
        return tx.try_send(throwing_move(v));
    } else {
        return tx.send(throwing_move(v));
    }
}

// Every value buffered, oldest first (faults disarmed).
template <class Rx> std::vector<int> drain(Rx& rx) {
    std::vector<int> out;
    while (auto r = rx.try_recv()) out.push_back(r->value);
    return out;
}

constexpr int threw = -1; // what the coroutines below return when their co_await threw

// co_await recv; returns the value, 0 for an error, or `threw`. Keeps the value in place after
// the co_await, so every move counted is the channel's.
template <class Rx> task<int> recv_catching(Rx& rx, manual_scheduler& s) {
    int out = threw;
    try {
        auto r = co_await rx.recv().resume_on(s.executor());
        out = r ? r->value : 0;
    } catch (const std::runtime_error&) {
    }
    co_return out;
}

// co_await send; returns 1 (sent), 0 (an error, value handed back) or `threw`.
template <class Tx> task<int> send_catching(Tx& tx, int v, manual_scheduler& s, bool posted) {
    int out = threw;
    try {
        std::optional<cochan::send_result<throwing_move>> r;
        if (posted) {
            r.emplace(co_await tx.send(throwing_move(v)).resume_on(s.executor()));
        } else {
            r.emplace(co_await tx.send(throwing_move(v)));
        }
        out = *r ? 1 : 0;
    } catch (const std::runtime_error&) {
    }
    co_return out;
}

// The channel still works: one more value goes through.
template <class Tx, class Rx> void check_usable(Tx& tx, Rx& rx) {
    REQUIRE(send_now(tx, 100));
    auto r = rx.try_recv();
    REQUIRE(r);
    CHECK(r->value == 100);
}

} // namespace

#define COCHAN_BOUNDED_KINDS(T) (cochan_test::spmc_bounded<T>), (cochan_test::mpmc_bounded<T>)

// ---- sending -----------------------------------------------------------------------------------

TEMPLATE_TEST_CASE("fault: try_send and unbounded send are strong at every throwing move",
                   "[faults][exception-safety][exactly-once][unbounded-send]",
                   COCHAN_ALL_KINDS(throwing_move)) {
    const int faults = for_every_fault([](int k) {
        auto [tx, rx] = TestType::make(3);
        REQUIRE(send_now(tx, 1));
        arm(k);
        bool raised = false;
        bool sent = false;
        try { // not inside REQUIRE: Catch2 would take the exception for a failure
            sent = send_now(tx, 2).has_value();
        } catch (const std::runtime_error&) {
            raised = true;
        }
        const bool fired = disarm();
        CHECK(raised == fired);
        CHECK(sent != raised);
        // Strong: a send that threw changed nothing; its value went with the argument.
        CHECK(rx.size() == (raised ? 1u : 2u));
        REQUIRE(send_now(tx, 3));
        CHECK(drain(rx) == (raised ? std::vector<int>{1, 3} : std::vector<int>{1, 2, 3}));
        check_usable(tx, rx);
        return fired;
    });
    WARN("faults injected: " << faults);
}

TEMPLATE_TEST_CASE("fault: a grant to a waiting receiver that throws leaves it waiting",
                   "[faults][exception-safety][exactly-once]", COCHAN_ALL_KINDS(throwing_move)) {
    const int faults = for_every_fault([](int k) {
        auto [tx, rx] = TestType::make(3);
        manual_scheduler sched;
        auto waiter = recv_catching(rx, sched);
        arm(k);
        bool raised = false;
        bool sent = false;
        try {
            sent = send_now(tx, 2).has_value(); // granted straight into the waiter's slot
        } catch (const std::runtime_error&) {
            raised = true;
        }
        const bool fired = disarm();
        CHECK(raised == fired);
        CHECK(sent != raised);
        // The sender saw the exception; the receiver was not woken and stays first in line.
        CHECK(sched.posted_total() == (raised ? 0u : 1u));
        CHECK(rx.size() == 0);
        REQUIRE(send_now(tx, 3));
        sched.run_all();
        REQUIRE(waiter.done());
        CHECK(waiter.result() == (raised ? 3 : 2));
        CHECK(drain(rx) == (raised ? std::vector<int>{} : std::vector<int>{3}));
        check_usable(tx, rx);
        return fired;
    });
    WARN("faults injected: " << faults);
}

TEMPLATE_TEST_CASE("fault: co_await send completing at once is strong at every throwing move",
                   "[faults][exception-safety][exactly-once]",
                   COCHAN_BOUNDED_KINDS(throwing_move)) {
    const bool posted = GENERATE(false, true); // resume_on moves the value once more
    CAPTURE(posted);
    const int faults = for_every_fault([posted](int k) {
        auto [tx, rx] = TestType::make(2);
        REQUIRE(send_now(tx, 1));
        manual_scheduler sched;
        arm(k);
        auto sender = send_catching(tx, 2, sched, posted);
        const bool fired = disarm();
        REQUIRE(sender.done()); // a slot was free: it never waits
        CHECK((sender.result() == threw) == fired);
        // Strong: the exception came out of the co_await (or the awaitable's construction)
        // and the channel is unchanged.
        CHECK(drain(rx) == (fired ? std::vector<int>{1} : std::vector<int>{1, 2}));
        check_usable(tx, rx);
        return fired;
    });
    WARN("faults injected: " << faults);
}

// No ';' in test names: CTest would split them (catch_discover_tests).
TEMPLATE_TEST_CASE("fault: a send admitted later gets its own exception, the freeing operation "
                   "is unaffected and the slot stays free",
                   "[faults][exception-safety][exactly-once]",
                   COCHAN_BOUNDED_KINDS(throwing_move)) {
    // What frees the slot the waiting send is admitted to.
    enum class freer { try_recv, recv, granted_recv };
    const freer how = GENERATE(freer::try_recv, freer::recv, freer::granted_recv);
    CAPTURE(static_cast<int>(how));
    const int faults = for_every_fault([how](int k) {
        auto [tx, rx] = TestType::make(1);
        manual_scheduler sched;
        std::optional<task<int>> granted; // granted_recv: holds the only slot with value 1
        if (how == freer::granted_recv) {
            granted.emplace(recv_catching(rx, sched));
            REQUIRE(send_now(tx, 1));
        } else {
            REQUIRE(send_now(tx, 1));
        }
        auto sender = send_catching(tx, 2, sched, true);
        REQUIRE_FALSE(sender.done()); // waits for the slot

        // The freeing operation, with the fault armed; `got` is what it received.
        int got = 0;
        arm(k);
        if (how == freer::try_recv) {
            try {
                auto r = rx.try_recv();
                got = r ? r->value : 0;
            } catch (const std::runtime_error&) {
                got = threw;
            }
        } else if (how == freer::recv) {
            auto receiver = recv_catching(rx, sched); // takes 1 at once
            REQUIRE(receiver.done());
            got = receiver.result();
        } else {
            sched.run_one(); // the granted receiver takes 1, which frees its slot
            REQUIRE(granted->done());
            got = granted->result();
        }
        const bool fired = disarm();
        sched.run_all();
        const int sent = sender.done() ? sender.result() : 2; // 2: still waiting
        INFO("received " << got << ", send " << sent);

        if (got == threw) {
            // The freeing operation threw; the value it was taking is not lost: a try_recv
            // left it at the head; a receive hands it back when a slot is free (always, for a
            // granted value), else it is destroyed (docs/design.md).
            if (sent == 2) {
                // Still at the head: taking it frees the slot, which admits 2 behind it.
                CHECK(drain(rx) == std::vector<int>{1, 2});
                sched.run_all();
                REQUIRE(sender.done());
                CHECK(sender.result() == 1);
            } else {
                // Popped by the receive itself, 1 gave its slot up and the send took it: 1 is
                // destroyed (documented). A granted value keeps its slot until it is taken, so
                // it must never end up here.
                INFO("1 was neither received nor handed back");
                CHECK(how == freer::recv);
                CHECK(sent == 1);
                CHECK(drain(rx) == std::vector<int>{2});
            }
        } else {
            CHECK(got == 1);
            REQUIRE(sender.done());
            if (sent == threw) {
                // Admitting the send threw: the exception reached that send only, its value
                // was destroyed with it, and the slot stays free.
                CHECK(rx.size() == 0);
                REQUIRE(send_now(tx, 3));
                CHECK(drain(rx) == std::vector<int>{3});
            } else {
                CHECK(sent == 1);
                CHECK(drain(rx) == std::vector<int>{2});
            }
        }
        check_usable(tx, rx);
        return fired;
    });
    WARN("faults injected: " << faults);
}

TEMPLATE_TEST_CASE("fault: an admitted send whose value goes to a waiting receiver and throws "
                   "fails alone and that receiver keeps waiting",
                   "[faults][exception-safety][exactly-once]",
                   COCHAN_BOUNDED_KINDS(throwing_move)) {
    const int faults = for_every_fault([](int k) {
        auto [tx, rx] = TestType::make(1);
        manual_scheduler sched;
        auto first = recv_catching(rx, sched);
        REQUIRE(send_now(tx, 1)); // granted to `first`: the only slot is held
        auto sender = send_catching(tx, 2, sched, true); // waits for that slot
        auto second = recv_catching(rx, sched);          // waits for a value
        REQUIRE_FALSE(sender.done());
        REQUIRE_FALSE(second.done());
        arm(k);
        sched.run_one(); // `first` takes 1: the slot admits 2, which goes straight to `second`
        const bool fired = disarm();
        sched.run_all();
        REQUIRE(first.done());
        const int got = first.result();
        INFO("first received " << got);
        if (got == threw) {
            // Taking 1 threw: 1 is handed on to `second`, the next waiting receiver, keeping
            // the slot; once `second` takes it (run_all above), 2 is admitted behind it.
            REQUIRE(second.done());
            CHECK(second.result() == 1);
            REQUIRE(sender.done());
            CHECK(sender.result() == 1);
            CHECK(drain(rx) == std::vector<int>{2});
        } else {
            CHECK(got == 1);
            REQUIRE(sender.done());
            if (sender.result() == threw) {
                CHECK_FALSE(second.done()); // the grant failed: still waiting, first in line
                REQUIRE(send_now(tx, 3));
                sched.run_all();
                REQUIRE(second.done());
                CHECK(second.result() == 3);
            } else {
                CHECK(sender.result() == 1);
                REQUIRE(second.done());
                CHECK(second.result() == 2);
            }
            CHECK(drain(rx).empty());
        }
        check_usable(tx, rx);
        return fired;
    });
    WARN("faults injected: " << faults);
}

// ---- receiving ---------------------------------------------------------------------------------

TEMPLATE_TEST_CASE("fault: try_recv is strong at every throwing move",
                   "[faults][exception-safety][exactly-once]", COCHAN_ALL_KINDS(throwing_move)) {
    const int faults = for_every_fault([](int k) {
        auto [tx, rx] = TestType::make(3);
        REQUIRE(send_now(tx, 1));
        REQUIRE(send_now(tx, 2));
        arm(k);
        int got = threw;
        try {
            auto r = rx.try_recv();
            got = r ? r->value : 0;
        } catch (const std::runtime_error&) {
        }
        const bool fired = disarm();
        CHECK((got == threw) == fired);
        // Strong: the value stays at the head when moving it out throws.
        CHECK(drain(rx) == (fired ? std::vector<int>{1, 2} : std::vector<int>{2}));
        check_usable(tx, rx);
        return fired;
    });
    WARN("faults injected: " << faults);
}

TEMPLATE_TEST_CASE("fault: co_await recv completing at once hands the value back at every "
                   "throwing move",
                   "[faults][exception-safety][exactly-once]", COCHAN_ALL_KINDS(throwing_move)) {
    const int faults = for_every_fault([](int k) {
        auto [tx, rx] = TestType::make(3);
        REQUIRE(send_now(tx, 1));
        REQUIRE(send_now(tx, 2));
        manual_scheduler sched;
        arm(k);
        auto receiver = recv_catching(rx, sched);
        const bool fired = disarm();
        REQUIRE(receiver.done()); // a value was buffered: it never waits
        const int got = receiver.result();
        CHECK((got == threw) == fired);
        // A slot is free (nobody waits to send), so a value whose move threw goes back to the
        // head, whichever of the receive's moves threw: nothing is lost.
        CHECK(drain(rx) == (fired ? std::vector<int>{1, 2} : std::vector<int>{2}));
        check_usable(tx, rx);
        return fired;
    });
    WARN("faults injected: " << faults);
}

TEMPLATE_TEST_CASE("fault: a blocking receive completing at once hands the value back at every "
                   "throwing move",
                   "[faults][blocking][exception-safety][exactly-once]",
                   COCHAN_ALL_KINDS(throwing_move)) {
    // Its first step takes the value outside any operation state, with or without a token
    // that can stop: a move out that throws must put it back at the head.
    const bool with_token = GENERATE(false, true);
    CAPTURE(with_token);
    const int faults = for_every_fault([with_token](int k) {
        auto [tx, rx] = TestType::make(3);
        REQUIRE(send_now(tx, 1));
        REQUIRE(send_now(tx, 2));
        cochan::default_stop_source stop; // never stopped
        arm(k);
        int got = threw;
        try {
            auto r = rx.blocking_recv(with_token ? stop.get_token() : cochan::default_stop_token{});
            got = r ? r->value : 0;
        } catch (const std::runtime_error&) {
        }
        const bool fired = disarm();
        CHECK((got == threw) == fired);
        CHECK(got != 0);
        CHECK(drain(rx) == (fired ? std::vector<int>{1, 2} : std::vector<int>{2}));
        check_usable(tx, rx);
        return fired;
    });
    WARN("faults injected: " << faults);
}

TEMPLATE_TEST_CASE("fault: a blocking send completing at once is strong at every throwing move",
                   "[faults][blocking][exception-safety][exactly-once]",
                   COCHAN_BOUNDED_KINDS(throwing_move)) {
    const bool with_token = GENERATE(false, true);
    CAPTURE(with_token);
    const int faults = for_every_fault([with_token](int k) {
        auto [tx, rx] = TestType::make(2);
        REQUIRE(send_now(tx, 1));
        cochan::default_stop_source stop; // never stopped
        arm(k);
        int sent = threw;
        try {
            sent = tx.blocking_send(throwing_move(2),
                                    with_token ? stop.get_token() : cochan::default_stop_token{})
                       ? 1
                       : 0;
        } catch (const std::runtime_error&) {
        }
        const bool fired = disarm();
        CHECK((sent == threw) == fired);
        CHECK(sent != 0); // a cell was free: never `full`
        CHECK(drain(rx) == (fired ? std::vector<int>{1} : std::vector<int>{1, 2}));
        check_usable(tx, rx);
        return fired;
    });
    WARN("faults injected: " << faults);
}

TEMPLATE_TEST_CASE("fault: a granted co_await recv hands the value back at every throwing move",
                   "[faults][exception-safety][exactly-once][capacity]",
                   COCHAN_ALL_KINDS(throwing_move)) {
    const int faults = for_every_fault([](int k) {
        auto [tx, rx] = TestType::make(3);
        manual_scheduler sched;
        auto receiver = recv_catching(rx, sched);
        REQUIRE(send_now(tx, 1)); // granted
        REQUIRE(send_now(tx, 2)); // buffered
        arm(k);
        sched.run_all(); // the receiver takes its grant
        const bool fired = disarm();
        REQUIRE(receiver.done());
        const int got = receiver.result();
        CHECK((got == threw) == fired);
        // A granted value holds its slot: if taking it throws, it always goes back to the head.
        CHECK(drain(rx) == (fired ? std::vector<int>{1, 2} : std::vector<int>{2}));
        if constexpr (TestType::bounded) {
            // ...and its slot is accounted for exactly once: the capacity is whole again.
            for (int v = 10; v < 13; ++v) CHECK(send_now(tx, v));
            CHECK_FALSE(send_now(tx, 13));
            CHECK(drain(rx) == std::vector<int>{10, 11, 12});
        }
        check_usable(tx, rx);
        return fired;
    });
    WARN("faults injected: " << faults);
}

TEMPLATE_TEST_CASE("fault: a destroyed granted receiver whose hand-back throws destroys only "
                   "that value",
                   "[faults][exception-safety][exactly-once][cancellation-hand-off]",
                   COCHAN_ALL_KINDS(throwing_move)) {
    // With a second waiting receiver the value is granted on to it; without one, it goes back
    // to the head of the buffer.
    const bool second_waits = GENERATE(false, true);
    CAPTURE(second_waits);
    const int faults = for_every_fault([second_waits](int k) {
        auto [tx, rx] = TestType::make(2);
        manual_scheduler sched;
        auto doomed = recv_catching(rx, sched);
        std::optional<task<int>> next;
        if (second_waits) next.emplace(recv_catching(rx, sched));
        REQUIRE(send_now(tx, 1)); // granted to `doomed`
        if (!second_waits) REQUIRE(send_now(tx, 2));
        sched.discard_all();
        arm(k);
        doomed.reset(); // its destructor hands 1 on
        const bool fired = disarm();
        // A destructor cannot report: a value whose hand-back throws is destroyed. Nothing else
        // changes: a second receiver still waits, first in line, and 2 stays buffered.
        if (second_waits) {
            CHECK(sched.pending() == (fired ? 0u : 1u));
            REQUIRE(send_now(tx, 3));
            sched.run_all();
            REQUIRE(next->done());
            CHECK(next->result() == (fired ? 3 : 1));
            CHECK(drain(rx) == (fired ? std::vector<int>{} : std::vector<int>{3}));
        } else {
            CHECK(drain(rx) == (fired ? std::vector<int>{2} : std::vector<int>{1, 2}));
        }
        if constexpr (TestType::bounded) {
            // The grant's slot was given back either way.
            CHECK(send_now(tx, 10));
            CHECK(send_now(tx, 11));
            CHECK_FALSE(send_now(tx, 12));
            CHECK(drain(rx) == std::vector<int>{10, 11});
        }
        check_usable(tx, rx);
        return fired;
    });
    WARN("faults injected: " << faults);
}

// ---- one-shot channels -------------------------------------------------------------------------

namespace {

// The value a one-shot holds now (try_recv, faults disarmed), or -1 when there is none.
int oneshot_left(cochan::oneshot_receiver<throwing_move>& rx) {
    auto r = rx.try_recv();
    return r ? r->value : -1;
}

} // namespace

TEST_CASE("fault: oneshot send is strong at every throwing move",
          "[faults][oneshot][exception-safety][exactly-once]") {
    const bool waits = GENERATE(false, true); // a receive waits for the value, or none does
    CAPTURE(waits);
    const int faults = for_every_fault([waits](int k) {
        auto [tx, rx] = cochan::oneshot<throwing_move>();
        manual_scheduler sched;
        std::optional<task<int>> receiver;
        if (waits) receiver.emplace(recv_catching(rx, sched));
        arm(k);
        bool threw_here = false;
        try {
            auto r = tx.send(throwing_move(1));
            CHECK(r);
        } catch (const std::runtime_error&) {
            threw_here = true;
        }
        const bool fired = disarm();
        CHECK(threw_here == fired);
        // A send that threw changed nothing: a receive still waits, nothing is stored, and the
        // one-shot still takes its one value.
        CHECK(sched.pending() == (waits && !fired ? 1u : 0u));
        if (fired) REQUIRE(tx.send(throwing_move(2)));
        if (waits) {
            sched.run_all();
            REQUIRE(receiver->done());
            CHECK(receiver->result() == (fired ? 2 : 1));
        } else {
            CHECK(oneshot_left(rx) == (fired ? 2 : 1));
        }
        CHECK(oneshot_left(rx) == -1);
        return fired;
    });
    WARN("faults injected: " << faults);
}

TEST_CASE("fault: oneshot try_recv is strong at every throwing move",
          "[faults][oneshot][exception-safety][exactly-once]") {
    const int faults = for_every_fault([](int k) {
        auto [tx, rx] = cochan::oneshot<throwing_move>();
        REQUIRE(tx.send(throwing_move(1)));
        arm(k);
        int got = threw;
        try {
            auto r = rx.try_recv();
            got = r ? r->value : 0;
        } catch (const std::runtime_error&) {
        }
        const bool fired = disarm();
        CHECK((got == threw) == fired);
        CHECK(oneshot_left(rx) == (fired ? 1 : -1)); // the value stayed, or it was taken once
        return fired;
    });
    WARN("faults injected: " << faults);
}

TEST_CASE("fault: a oneshot co_await recv whose move throws gives the value back to the "
          "one-shot",
          "[faults][oneshot][exception-safety][exactly-once]") {
    const bool granted = GENERATE(false, true); // it waited and was granted, or took it at once
    CAPTURE(granted);
    const int faults = for_every_fault([granted](int k) {
        auto [tx, rx] = cochan::oneshot<throwing_move>();
        manual_scheduler sched;
        std::optional<task<int>> receiver;
        if (granted) {
            receiver.emplace(recv_catching(rx, sched));
            REQUIRE(tx.send(throwing_move(1)));
            arm(k);
            sched.run_all(); // the receive takes its grant
        } else {
            REQUIRE(tx.send(throwing_move(1)));
            arm(k);
            receiver.emplace(recv_catching(rx, sched)); // completes at once
        }
        const bool fired = disarm();
        REQUIRE(receiver->done());
        CHECK((receiver->result() == threw) == fired);
        // The receiver lives on: the value is stored again for its next receive, not destroyed.
        CHECK(oneshot_left(rx) == (fired ? 1 : -1));
        return fired;
    });
    WARN("faults injected: " << faults);
}

TEST_CASE("fault: a destroyed granted oneshot receive whose give-back throws destroys the value "
          "once",
          "[faults][oneshot][exception-safety][exactly-once][cancellation-hand-off]") {
    const int faults = for_every_fault([](int k) {
        auto [tx, rx] = cochan::oneshot<throwing_move>();
        manual_scheduler sched;
        std::optional<task<int>> doomed;
        doomed.emplace(recv_catching(rx, sched));
        REQUIRE(tx.send(throwing_move(1))); // granted
        sched.discard_all();
        arm(k);
        doomed.reset(); // gives the value back
        const bool fired = disarm();
        // A destructor cannot report: a value whose give-back throws is destroyed (once: the
        // harness counts); otherwise it is stored again.
        CHECK(oneshot_left(rx) == (fired ? -1 : 1));
        return fired;
    });
    WARN("faults injected: " << faults);
}

// ---- regression tests for bugs these layers found ----------------------------------------------

// Found by the faults above, g++ only. recv_awaitable::await_resume builds the result in a local
// (`recv_result<T> r(...)`), then resets the slot, marks itself finished, releases the grant's
// slot, and `return r;`. g++ does not elide that return (the function has other returns), so it
// moves the value a third time, after the value has left the slot: if that move throws, the
// value is destroyed during unwinding instead of going back to the channel, and for a grant the
// slot was already released (a waiting sender may have taken it). clang elides the copy and
// makes the two documented moves.
TEST_CASE("bug: co_await recv loses the value when the move out of await_resume throws (g++)",
          "[faults][regression][exception-safety][exactly-once]") {
    throwing_move::reset();
    {
        auto [tx, rx] = cochan::spmc::bounded<throwing_move>(2);
        REQUIRE(tx.try_send(throwing_move(1)));
        REQUIRE(tx.try_send(throwing_move(2)));
        manual_scheduler sched;
        // Moves: channel -> awaitable slot (0), slot -> result (1), then g++'s extra move of
        // the result (2). Documented: if a move after the first throws, 1 goes back to the head.
        arm(2);
        auto receiver = recv_catching(rx, sched);
        const bool fired = disarm();
        REQUIRE(receiver.done());
        if (fired) {
            CHECK(receiver.result() == threw);
            CHECK(drain(rx) == std::vector<int>{1, 2}); // g++ 12: {2}, value 1 destroyed
        } else {
            SUCCEED("this compiler makes only the two documented moves");
        }
    }
    CHECK(throwing_move::live() == 0);
}

// ---- allocation failure ------------------------------------------------------------------------

#ifdef COCHAN_TEST_NO_ALLOC_HOOK
TEST_CASE("alloc: allocation failures are not injected under clang's TSan or MSan",
          "[faults][alloc]") {
    WARN("skipped: this sanitizer's runtime defines operator new itself");
}
#else

namespace {

// 252 bytes: an unbounded channel's segments hold 8 of them, so a few dozen values cross
// several segment boundaries (and a drained segment becomes the spare).
struct big {
    counted c;
    std::array<char, 248> pad{};
    explicit big(int v) noexcept : c(v) {}
    int value() const noexcept { return c.value; }
};

// The operations a run makes, recorded without allocating (nothing else may allocate while the
// hook is armed: the budget counts the channel's allocations only).
struct alloc_run {
    static constexpr int capacity = 128;
    std::array<int, capacity> received{};
    int n_received = 0;
    int sent = 0;       // values 0..sent-1 were sent successfully
    int failed_at = -1; // the value whose send threw bad_alloc
    std::size_t size_before_failure = 0;
    std::size_t size_after_failure = 0;
};

// Sends 20, takes 12, sends 20, takes 12, sends 20: segments are allocated, drained, kept as the
// spare and reused. Stops at the first send that throws.
template <class Tx, class Rx> void alloc_workload(Tx& tx, Rx& rx, alloc_run& run) {
    auto send_some = [&](int n) {
        for (int i = 0; i < n; ++i) {
            const std::size_t before = rx.size();
            try {
                auto r = tx.send(big(run.sent));
                if (!r) return false;
            } catch (const std::bad_alloc&) {
                run.failed_at = run.sent;
                run.size_before_failure = before;
                run.size_after_failure = rx.size();
                return false;
            }
            ++run.sent;
        }
        return true;
    };
    auto take_some = [&](int n) {
        for (int i = 0; i < n; ++i) {
            auto r = rx.try_recv();
            if (!r) return;
            run.received[static_cast<std::size_t>(run.n_received++)] = r->value();
        }
    };
    if (!send_some(20)) return;
    take_some(12);
    if (!send_some(20)) return;
    take_some(12);
    send_some(20);
}

} // namespace

TEMPLATE_TEST_CASE("alloc: an unbounded send that cannot allocate a segment throws bad_alloc "
                   "and loses nothing",
                   "[faults][alloc][unbounded-send][errors-and-misuse][exactly-once]",
                   (spmc_unbounded<big>), (mpmc_unbounded<big>)) {
    int faults = 0;
    for (long k = 0; k < 64; ++k) {
        CAPTURE(k);
        counted::reset();
        {
            auto [tx, rx] = TestType::make();
            alloc_run run;
            fail_alloc_after = k;
            alloc_workload(tx, rx, run);
            const bool fired = fail_alloc_after < 0;
            fail_alloc_after = -1;

            if (fired) {
                ++faults;
                // The send reported it, and changed nothing: the channel holds what it held.
                CHECK(run.failed_at == run.sent);
                CHECK(run.size_after_failure == run.size_before_failure);
            } else {
                CHECK(run.failed_at == -1);
                CHECK(run.sent == 60);
            }
            // No value already in the channel is lost: what was received and what remains are
            // exactly the values sent, in order.
            std::vector<int> out(run.received.begin(), run.received.begin() + run.n_received);
            while (auto r = rx.try_recv()) out.push_back(r->value());
            std::vector<int> expected(static_cast<std::size_t>(run.sent));
            for (int i = 0; i < run.sent; ++i) expected[static_cast<std::size_t>(i)] = i;
            CHECK(out == expected);
            // The channel stays usable, across new segments too.
            for (int i = 0; i < 20; ++i) REQUIRE(tx.send(big(1000 + i)));
            for (int i = 0; i < 20; ++i) {
                auto r = rx.try_recv();
                REQUIRE(r);
                CHECK(r->value() == 1000 + i);
            }
            if (!fired) break; // the workload made fewer than k + 1 allocations
        }
        CHECK(counted::live() == 0);
    }
    CHECK(faults >= 5); // the workload allocates at least five segments
    WARN("allocation faults injected: " << faults);
}

TEMPLATE_TEST_CASE("alloc: making a channel that cannot allocate throws bad_alloc and leaks "
                   "nothing",
                   "[faults][alloc][errors-and-misuse]", COCHAN_ALL_KINDS(counted)) {
    // The shared state, then (bounded) the ring: each allocation fails in turn. A leak shows in
    // LeakSanitizer's report when the test binary exits.
    int faults = 0;
    for (long k = 0; k < 8; ++k) {
        CAPTURE(k);
        bool threw = false;
        fail_alloc_after = k;
        try {
            auto channel = TestType::make(4);
            (void)channel;
        } catch (const std::bad_alloc&) {
            threw = true;
        }
        const bool fired = fail_alloc_after < 0;
        fail_alloc_after = -1;
        CHECK(threw == fired);
        if (!fired) break;
        ++faults;
    }
    CHECK(faults == (TestType::bounded ? 2 : 1));
    WARN("allocation faults injected: " << faults);
    auto [tx, rx] = TestType::make(4); // and nothing is left in a bad state
    REQUIRE(push(tx, counted(1)));
    CHECK(rx.try_recv()->value == 1);
}

TEMPLATE_TEST_CASE("alloc: a hand-back that cannot allocate a segment destroys only that value",
                   "[faults][alloc][exactly-once][cancellation-hand-off]", (spmc_unbounded<big>),
                   (mpmc_unbounded<big>)) {
    counted::reset();
    {
        auto [tx, rx] = TestType::make();
        manual_scheduler sched;
        auto doomed = [](auto& rx, manual_scheduler& s) -> task<int> {
            auto r = co_await rx.recv().resume_on(s.executor());
            co_return r ? r->value() : -1;
        }(rx, sched);
        REQUIRE(tx.send(big(1)));                              // granted to `doomed`
        for (int i = 2; i <= 9; ++i) REQUIRE(tx.send(big(i))); // one full segment, from its start
        sched.discard_all();
        fail_alloc_after = 0; // the hand-back needs a new head segment: that allocation fails
        doomed.reset();
        const bool fired = fail_alloc_after < 0;
        fail_alloc_after = -1;
        CHECK(fired);
        // A destructor cannot report: 1 is destroyed; everything else is intact and in order.
        std::vector<int> out;
        while (auto r = rx.try_recv()) out.push_back(r->value());
        CHECK(out == std::vector<int>{2, 3, 4, 5, 6, 7, 8, 9});
        REQUIRE(tx.send(big(10)));
        CHECK(rx.try_recv()->value() == 10);
    }
    CHECK(counted::live() == 0);
    WARN("allocation faults injected: 1");
}

TEST_CASE("alloc: a oneshot allocates once in its whole life",
          "[faults][alloc][oneshot][errors-and-misuse]") {
    // The hook's budget counts this thread's allocations: armed with a large budget around each
    // step, what it consumed is what the step allocated. No Catch2 macro runs while it is armed.
    constexpr long budget = 1000;
    auto allocations = [](auto&& step) {
        fail_alloc_after = budget;
        step();
        const long used = budget - fail_alloc_after;
        fail_alloc_after = -1;
        return used;
    };
    counted::reset();
    {
        using channel =
            std::pair<cochan::oneshot_sender<counted>, cochan::oneshot_receiver<counted>>;
        std::optional<channel> ch;
        const long made = allocations([&] { ch.emplace(cochan::oneshot<counted>()); });
        auto waiting = [](cochan::oneshot_receiver<counted>& rx) -> task<int> {
            auto r = co_await rx.recv(); // the frame is the test's allocation, made here
            co_return r ? r->value : -1;
        }(ch->second);
        bool sent = false;
        bool refused = false;
        const long used = allocations([&] {
            sent = static_cast<bool>(ch->first.send(counted(1))); // grant, inline resumption
            refused = !ch->first.send(counted(2));                // full, value back
            (void)ch->second.try_recv();                          // disconnected
            ch.reset();                                           // both endpoints, the state
        });
        CHECK(made == 1);
        CHECK(used == 0);
        CHECK(sent);
        CHECK(refused);
        REQUIRE(waiting.done());
        CHECK(waiting.result() == 1);
    }
    CHECK(counted::live() == 0);
    // And making one that cannot allocate throws bad_alloc and leaks nothing (LeakSanitizer).
    fail_alloc_after = 0;
    bool threw = false;
    try {
        auto channel = cochan::oneshot<counted>();
        (void)channel;
    } catch (const std::bad_alloc&) {
        threw = true;
    }
    fail_alloc_after = -1;
    CHECK(threw);
}
#endif // COCHAN_TEST_NO_ALLOC_HOOK

// A poster that cannot post (its executor failed to allocate) used to throw out of a noexcept
// notification and terminate the program, with the value granted to the waiting receiver.
TEST_CASE("fault: a resume_on poster that throws resumes the coroutine inline instead",
          "[faults][where-resumed]") {
    struct failing_poster {
        int* calls;
        void operator()(std::coroutine_handle<>) const {
            ++*calls;
            throw std::bad_alloc();
        }
    };
    int calls = 0;
    auto [tx, rx] = cochan::mpmc::bounded<int>(1);
    auto consumer = [](auto& rx, failing_poster p) -> task<int> {
        auto r = co_await rx.recv().resume_on(p);
        co_return r ? *r : -1;
    }(rx, failing_poster{&calls});
    REQUIRE_FALSE(consumer.done());
    REQUIRE(tx.try_send(5)); // grants 5; posting fails; the consumer resumes here
    CHECK(calls == 1);
    REQUIRE(consumer.done());
    CHECK(consumer.result() == 5);
    REQUIRE(tx.try_send(6)); // the grant's slot was released
    CHECK(*rx.try_recv() == 6);
}
