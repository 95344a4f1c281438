// The combination matrix of the core: every public operation, run with every endpoint kind the
// reference documents it for, checking the value it delivers and the error it must give in each
// documented case (disconnected, closed, empty, full, timed_out, cancelled). Documented
// combinations once broke because nothing compiled or ran them; here every one is instantiated
// and run.
//
// The endpoint kinds are one table, `kinds` below: a new kind is one line there (a struct with
// `name`, `make(scheduler)` and the traits), and every test case runs on it. Each test case is
// one operation (or family), over the kinds whose traits say they have it (`channel_kinds`,
// `bounded_kinds`); a new operation is one more test case over one of these lists.
#include <cochan/cochan.hpp>

#include "support/manual_scheduler.hpp"
#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

using namespace std::chrono_literals;
using cochan::recv_errc;
using cochan::send_errc;
using cochan_test::manual_scheduler;
using cochan_test::task;

namespace {

// ---- the kinds ----------------------------------------------------------------------------------

// The factories of one namespace. Bounded channels hold 2 values.
struct spmc {
    static constexpr const char* name = "spmc";
    static constexpr bool multi = false;
    static auto bounded() { return cochan::spmc::bounded<int>(2); }
    static auto unbounded() { return cochan::spmc::unbounded<int>(); }
    static auto rendezvous() { return cochan::spmc::rendezvous<int>(); }
};
struct mpmc {
    static constexpr const char* name = "mpmc";
    static constexpr bool multi = true;
    static auto bounded() { return cochan::mpmc::bounded<int>(2); }
    static auto unbounded() { return cochan::mpmc::unbounded<int>(); }
    static auto rendezvous() { return cochan::mpmc::rendezvous<int>(); }
};

// What every kind says about itself; a kind overrides the traits that hold for it.
struct kind_traits {
    static constexpr bool multi = false;         // copyable senders (MPMC)
    static constexpr bool has_capacity = false;  // bounded endpoints: try_send, co_await send,
                                                 // send(v, token), blocking_send_for, capacity()
    static constexpr std::size_t capacity = 0;   // capacity() where has_capacity
    static constexpr bool is_rendezvous = false; // capacity 0: a send completes into a receiver
    static constexpr bool is_oneshot = false;    // one value, move-only ends, no select,
                                                 // recv_many, size(), blocking_send or rx.close()
    static constexpr bool is_bound = false;      // bind_executor: a wait resumes through the
                                                 // test's scheduler, not inline
};

template <class F> struct bounded : kind_traits {
    inline static const std::string name = std::string(F::name) + "::bounded(2)";
    static constexpr bool multi = F::multi;
    static constexpr bool has_capacity = true;
    static constexpr std::size_t capacity = 2;
    static auto make(manual_scheduler&) { return F::bounded(); }
};
template <class F> struct unbounded : kind_traits {
    inline static const std::string name = std::string(F::name) + "::unbounded";
    static constexpr bool multi = F::multi;
    static auto make(manual_scheduler&) { return F::unbounded(); }
};
template <class F> struct rendezvous : kind_traits {
    inline static const std::string name = std::string(F::name) + "::rendezvous";
    static constexpr bool multi = F::multi;
    static constexpr bool has_capacity = true;
    static constexpr bool is_rendezvous = true;
    static auto make(manual_scheduler&) { return F::rendezvous(); }
};
struct oneshot : kind_traits {
    inline static const std::string name = "oneshot";
    static constexpr bool is_oneshot = true;
    static auto make(manual_scheduler&) { return cochan::oneshot<int>(); }
};
// Both ends of kind K, bound to the test's scheduler (cochan::resume_on).
template <class K> struct bound : K {
    inline static const std::string name = "bound " + K::name;
    static constexpr bool is_bound = true;
    static auto make(manual_scheduler& s) {
        auto [tx, rx] = K::make(s);
        return std::pair(cochan::resume_on(s.executor(), std::move(tx)),
                         cochan::resume_on(s.executor(), std::move(rx)));
    }
};

// THE TABLE: every endpoint kind, one per line.
using kinds = std::tuple<bounded<spmc>,           //
                         unbounded<spmc>,         //
                         rendezvous<spmc>,        //
                         bounded<mpmc>,           //
                         unbounded<mpmc>,         //
                         rendezvous<mpmc>,        //
                         oneshot,                 //
                         bound<bounded<spmc>>,    //
                         bound<unbounded<spmc>>,  //
                         bound<rendezvous<spmc>>, //
                         bound<bounded<mpmc>>,    //
                         bound<unbounded<mpmc>>,  //
                         bound<rendezvous<mpmc>>, //
                         bound<oneshot>>;

// The kinds of `List` that `Keep` keeps.
template <class List, template <class> class Keep> struct filter;
template <class... K, template <class> class Keep> struct filter<std::tuple<K...>, Keep> {
    using type = decltype(std::tuple_cat(
        std::declval<std::conditional_t<Keep<K>::value, std::tuple<K>, std::tuple<>>>()...));
};
template <class K> struct is_channel : std::bool_constant<!K::is_oneshot> {};
template <class K> struct has_capacity : std::bool_constant<K::has_capacity> {};
// spmc/mpmc channels: select, recv_many, size(), rx.close(), blocking_send.
using channel_kinds = typename filter<kinds, is_channel>::type;
// Bounded endpoints (rendezvous included): try_send, co_await send, blocking_send_for.
using bounded_kinds = typename filter<kinds, has_capacity>::type;

// A new channel of kind K, with the scheduler a bound kind resumes through.
template <class K> struct channel {
    using ends = decltype(K::make(std::declval<manual_scheduler&>()));
    using sender = typename ends::first_type;
    using receiver = typename ends::second_type;
    using kind = K;

    manual_scheduler sched;
    ends e = K::make(sched);
    sender& tx = e.first;
    receiver& rx = e.second;

    // Runs what waits for the scheduler (a bound kind's woken coroutines; nothing otherwise).
    void settle() { sched.run_all(); }
};

// ---- operations and outcomes --------------------------------------------------------------------

template <class Endpoint> void drop(Endpoint& e) {
    auto gone = std::move(e);
}

// Outcomes as text, so that a failed check prints what happened: "value 7", "sending on a full
// channel, value 3 back", "still waiting".
std::string value(int v) {
    return "value " + std::to_string(v);
}
std::string show(recv_errc e) {
    return cochan::to_string(e);
}
std::string back(send_errc e, int v) {
    return std::string(cochan::to_string(e)) + ", " + value(v) + " back";
}
const std::string sent = "sent";
std::string show(const cochan::recv_result<int>& r) {
    return r ? value(*r) : show(r.error());
}
std::string show(const cochan::recv_result<std::size_t>& r) {
    return r ? std::to_string(*r) + " values" : show(r.error());
}
std::string show(const cochan::send_result<int>& r) {
    return r ? sent : back(r.error().reason, r.error().value);
}
// A select's value: the index of the receiver it came from, and the value.
std::string from(std::size_t index, int v) {
    return "from " + std::to_string(index) + ": " + value(v);
}
template <class... T> std::string show(const cochan::recv_result<std::variant<T...>>& r) {
    if (!r) return show(r.error());
    return std::visit([&](int v) { return from(r->index(), v); }, *r);
}
template <class R> std::string show(const task<R>& t) {
    return t.done() ? show(t.result()) : "still waiting";
}

template <class Rx, class... Token> task<cochan::recv_result<int>> co_recv(Rx& rx, Token... token) {
    co_return co_await rx.recv(std::move(token)...);
}
// The awaitables with `.resume_on(s)`: they resume through `s`, whatever the kind (a bound
// kind's target is replaced).
template <class Rx> task<cochan::recv_result<int>> co_recv_via(Rx& rx, manual_scheduler& s) {
    co_return co_await rx.recv().resume_on(s.executor());
}
template <class Tx> task<cochan::send_result<int>> co_send_via(Tx& tx, int v, manual_scheduler& s) {
    co_return co_await tx.send(v).resume_on(s.executor());
}
template <class Rx>
task<cochan::recv_result<std::size_t>> co_recv_many_via(Rx& rx, std::vector<int>& out,
                                                        manual_scheduler& s) {
    co_return co_await rx.recv_many(out, 8).resume_on(s.executor());
}
template <class... Rx>
task<cochan::recv_result<std::variant<typename Rx::value_type...>>>
co_select_via(manual_scheduler& s, const Rx&... rx) {
    co_return co_await cochan::select(rx...).resume_on(s.executor());
}
template <class Rx, class... Token>
task<cochan::recv_result<std::size_t>> co_recv_many(Rx& rx, std::vector<int>& out, Token... token) {
    co_return co_await rx.recv_many(out, 8, std::move(token)...);
}
// co_await tx.send(v[, token]): bounded kinds.
template <class Tx, class... Token>
task<cochan::send_result<int>> co_send(Tx& tx, int v, Token... token) {
    co_return co_await tx.send(v, std::move(token)...);
}
template <class... Rx>
task<cochan::recv_result<std::variant<typename Rx::value_type...>>> co_select(const Rx&... rx) {
    co_return co_await cochan::select(rx...);
}
template <class... Rx>
task<cochan::recv_result<std::variant<typename Rx::value_type...>>>
co_select(cochan::default_stop_token token, const Rx&... rx) {
    co_return co_await cochan::select(std::move(token), rx...);
}

// A send that never waits: try_send on a bounded kind, send on the others.
template <class K> cochan::send_result<int> push(channel<K>& c, int v) {
    if constexpr (K::has_capacity) {
        return c.tx.try_send(v);
    } else {
        return c.tx.send(v);
    }
}
// Makes `v` available to a receive: sent at once, or (rendezvous) by a send that waits for the
// receive. The task completes when the send does.
template <class K> task<cochan::send_result<int>> offer(channel<K>& c, int v) {
    if constexpr (K::has_capacity) {
        co_return co_await c.tx.send(v);
    } else {
        co_return c.tx.send(v);
    }
}
// Fills a bounded kind, so that the next send waits (a rendezvous channel is always "full").
template <class K> void fill(channel<K>& c) {
    if constexpr (K::has_capacity) {
        for (std::size_t i = 0; i < K::capacity; ++i)
            REQUIRE(show(c.tx.try_send(100 + int(i))) == sent);
    }
}
// The send a thread may make: blocking_send where the kind has it, else send.
template <class K> cochan::send_result<int> blocking_push(channel<K>& c, int v) {
    if constexpr (K::is_oneshot) {
        return c.tx.send(v);
    } else {
        return c.tx.blocking_send(v);
    }
}

} // namespace

// ---- the members each kind has ------------------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("matrix: each kind has exactly the members the reference lists for it",
                        "[matrix]", kinds) {
    using K = TestType;
    using Tx = typename channel<K>::sender;
    using Rx = typename channel<K>::receiver;
    INFO(K::name);
    STATIC_REQUIRE(std::is_same_v<typename Tx::value_type, int>);
    STATIC_REQUIRE(std::is_same_v<typename Rx::value_type, int>);
    // Sends (a deleted overload reads as absent, as for any generic code).
    STATIC_REQUIRE(requires(Tx & tx) { tx.try_send(1); } == K::has_capacity);
    STATIC_REQUIRE(requires(Tx & tx, cochan::default_stop_token t) { tx.send(1, t); } ==
                   K::has_capacity);
    STATIC_REQUIRE(requires(Tx & tx) { tx.blocking_send(1); } == !K::is_oneshot);
    STATIC_REQUIRE(requires(Tx & tx) { tx.blocking_send_for(1, 1ms); } == K::has_capacity);
    STATIC_REQUIRE(requires(const Tx& tx) { tx.send(1); } == K::multi); // const: MPMC only
    STATIC_REQUIRE(std::is_copy_constructible_v<Tx> == K::multi);
    // Receives.
    STATIC_REQUIRE(requires(const Rx& rx) { rx.recv(); } == !K::is_oneshot);
    STATIC_REQUIRE(requires(const Rx& rx) { rx.close(); } == !K::is_oneshot);
    STATIC_REQUIRE(requires(const Rx& rx, std::vector<int>& out) { rx.try_recv_many(out, 1); } ==
                   !K::is_oneshot);
    STATIC_REQUIRE(cochan::channel_receiver<Rx> == !K::is_oneshot); // select takes it
    STATIC_REQUIRE(std::is_copy_constructible_v<Rx> == !K::is_oneshot);
    // Queries.
    STATIC_REQUIRE(requires(const Rx& rx) { rx.size(); } == !K::is_oneshot);
    STATIC_REQUIRE(requires(const Tx& tx) { tx.empty(); } == !K::is_oneshot);
    STATIC_REQUIRE(requires(const Rx& rx) { rx.capacity(); } == K::has_capacity);
    STATIC_REQUIRE(requires(const Tx& tx) { tx.capacity(); } == K::has_capacity);
    STATIC_REQUIRE(requires(const Tx& tx, const Rx& rx) {
        tx.sender_count();
        tx.receiver_count();
        rx.sender_count();
        rx.receiver_count();
    } == !K::is_oneshot);
    STATIC_REQUIRE(requires(const Tx& tx, const Rx& rx) {
        { tx.is_closed() } -> std::same_as<bool>;
        { rx.is_closed() } -> std::same_as<bool>;
    });
}

// ---- co_await send / recv -----------------------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("matrix: co_await recv takes a value sent before or after it waits",
                        "[matrix]", kinds) {
    using K = TestType;
    INFO(K::name);
    { // sent first (rendezvous: the send waits for the receive)
        channel<K> c;
        auto s = offer(c, 7);
        CHECK(s.done() == !K::is_rendezvous);
        auto r = co_recv(c.rx);
        c.settle();
        CHECK(show(r) == value(7));
        CHECK(show(s) == sent);
    }
    { // received first: the receive waits, and the send grants it the value
        channel<K> c;
        auto r = co_recv(c.rx);
        CHECK(show(r) == "still waiting");
        auto s = offer(c, 8);
        CHECK(r.done() == !K::is_bound); // a bound receiver resumes through its target
        c.settle();
        CHECK(show(r) == value(8));
        CHECK(show(s) == sent);
    }
}

TEMPLATE_LIST_TEST_CASE("matrix: co_await send waits for room, then sends", "[matrix]",
                        bounded_kinds) {
    using K = TestType;
    INFO(K::name);
    channel<K> c;
    fill(c);
    auto s = co_send(c.tx, 9);
    CHECK(show(s) == "still waiting");
    // Taking a value frees a slot for it (rendezvous: takes its value).
    CHECK(show(c.rx.try_recv()) == value(K::is_rendezvous ? 9 : 100));
    CHECK(s.done() == !K::is_bound);
    c.settle();
    CHECK(show(s) == sent);
    if constexpr (!K::is_rendezvous) {
        CHECK(show(c.rx.try_recv()) == value(101));
        CHECK(show(c.rx.try_recv()) == value(9));
    }
    CHECK(show(c.rx.try_recv()) == show(recv_errc::empty));
}

TEMPLATE_LIST_TEST_CASE("matrix: the last sender gone, receivers drain, then get disconnected, and "
                        "a waiting one is woken",
                        "[matrix]", kinds) {
    using K = TestType;
    INFO(K::name);
    { // a waiting receive is woken
        channel<K> c;
        auto r = co_recv(c.rx);
        CHECK(show(r) == "still waiting");
        drop(c.tx);
        c.settle();
        CHECK(show(r) == show(recv_errc::disconnected));
        CHECK(show(co_recv(c.rx)) == show(recv_errc::disconnected)); // at once
        CHECK(show(c.rx.try_recv()) == show(recv_errc::disconnected));
        CHECK(show(c.rx.blocking_recv()) == show(recv_errc::disconnected));
    }
    if constexpr (!K::is_rendezvous) { // what was sent drains first
        channel<K> c;
        REQUIRE(show(push(c, 7)) == sent);
        drop(c.tx);
        CHECK(show(co_recv(c.rx)) == value(7));
        CHECK(show(co_recv(c.rx)) == show(recv_errc::disconnected));
    }
}

TEMPLATE_LIST_TEST_CASE("matrix: the last receiver gone, every send fails disconnected with its "
                        "value back, and a waiting one is woken",
                        "[matrix]", kinds) {
    using K = TestType;
    INFO(K::name);
    channel<K> c;
    if constexpr (K::has_capacity) { // a waiting send is woken
        fill(c);
        auto s = co_send(c.tx, 9);
        CHECK(show(s) == "still waiting");
        drop(c.rx);
        c.settle();
        CHECK(show(s) == back(send_errc::disconnected, 9));
        CHECK(show(co_send(c.tx, 8)) == back(send_errc::disconnected, 8)); // at once
    } else {
        drop(c.rx);
    }
    CHECK(show(push(c, 7)) == back(send_errc::disconnected, 7));
    if constexpr (!K::is_oneshot) {
        CHECK(show(c.tx.blocking_send(6)) == back(send_errc::disconnected, 6));
        CHECK(c.tx.size() == 0); // what was buffered went with the last receiver
    }
}

// ---- stop tokens --------------------------------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("matrix: recv(token) is cancelled by a stop request before or while it "
                        "waits, and takes nothing",
                        "[matrix]", kinds) {
    using K = TestType;
    INFO(K::name);
    { // already stopped: cancelled without waiting, even with a value there
        channel<K> c;
        auto s = offer(c, 7);
        cochan::default_stop_source stop;
        stop.request_stop();
        CHECK(show(co_recv(c.rx, stop.get_token())) == show(recv_errc::cancelled));
        CHECK(show(c.rx.blocking_recv(stop.get_token())) == show(recv_errc::cancelled));
        CHECK(show(c.rx.try_recv()) == value(7)); // still there
        c.settle();
        CHECK(show(s) == sent);
    }
    { // stopped while it waits
        channel<K> c;
        cochan::default_stop_source stop;
        auto r = co_recv(c.rx, stop.get_token());
        CHECK(show(r) == "still waiting");
        stop.request_stop();
        c.settle();
        CHECK(show(r) == show(recv_errc::cancelled));
        // It no longer waits: the next value is not granted to it.
        if constexpr (K::is_rendezvous) {
            CHECK(show(c.tx.try_send(9)) == back(send_errc::full, 9));
        } else {
            REQUIRE(show(push(c, 9)) == sent);
            CHECK(show(c.rx.try_recv()) == value(9));
        }
    }
}

TEMPLATE_LIST_TEST_CASE("matrix: send(v, token) is cancelled by a stop request before or while it "
                        "waits, with its value back",
                        "[matrix]", bounded_kinds) {
    using K = TestType;
    INFO(K::name);
    { // already stopped: cancelled, even with room (rendezvous: a receiver waiting)
        channel<K> c;
        std::optional<task<cochan::recv_result<int>>> r;
        if constexpr (K::is_rendezvous) r.emplace(co_recv(c.rx));
        cochan::default_stop_source stop;
        stop.request_stop();
        CHECK(show(co_send(c.tx, 7, stop.get_token())) == back(send_errc::cancelled, 7));
        CHECK(show(c.tx.blocking_send(8, stop.get_token())) == back(send_errc::cancelled, 8));
        if constexpr (K::is_rendezvous) {
            CHECK(show(*r) == "still waiting");
            drop(c.tx);
            c.settle();
            CHECK(show(*r) == show(recv_errc::disconnected));
        } else {
            CHECK(show(c.rx.try_recv()) == show(recv_errc::empty));
        }
    }
    { // stopped while it waits for room
        channel<K> c;
        fill(c);
        cochan::default_stop_source stop;
        auto s = co_send(c.tx, 9, stop.get_token());
        CHECK(show(s) == "still waiting");
        stop.request_stop();
        c.settle();
        CHECK(show(s) == back(send_errc::cancelled, 9));
        // It no longer waits: freeing a slot does not let 9 in.
        if constexpr (!K::is_rendezvous) {
            CHECK(show(c.rx.try_recv()) == value(100));
            CHECK(show(c.rx.try_recv()) == value(101));
        }
        CHECK(show(c.rx.try_recv()) == show(recv_errc::empty));
    }
}

// ---- sends and receives that never wait ---------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("matrix: try_recv gives the value, empty or disconnected", "[matrix]",
                        kinds) {
    using K = TestType;
    INFO(K::name);
    channel<K> c;
    CHECK(show(c.rx.try_recv()) == show(recv_errc::empty));
    auto s = offer(c, 7);
    CHECK(show(c.rx.try_recv()) == value(7));
    c.settle();
    CHECK(show(s) == sent);
    // A one-shot's value, once taken, is gone for good.
    CHECK(show(c.rx.try_recv()) ==
          show(K::is_oneshot ? recv_errc::disconnected : recv_errc::empty));
    drop(c.tx);
    CHECK(show(c.rx.try_recv()) == show(recv_errc::disconnected));
}

TEMPLATE_LIST_TEST_CASE("matrix: a send that never waits (try_send, an unbounded or one-shot "
                        "send) is sent, full, or disconnected",
                        "[matrix]", kinds) {
    using K = TestType;
    INFO(K::name);
    channel<K> c;
    if constexpr (K::is_rendezvous) {
        CHECK(show(c.tx.try_send(1)) == back(send_errc::full, 1)); // no receiver waits
        auto r = co_recv(c.rx);
        CHECK(show(c.tx.try_send(2)) == sent); // granted to the waiting receive
        c.settle();
        CHECK(show(r) == value(2));
    } else if constexpr (K::has_capacity) {
        CHECK(show(c.tx.try_send(1)) == sent);
        CHECK(show(c.tx.try_send(2)) == sent);
        CHECK(show(c.tx.try_send(3)) == back(send_errc::full, 3));
        CHECK(show(c.rx.try_recv()) == value(1));
        CHECK(show(c.rx.try_recv()) == value(2));
    } else if constexpr (K::is_oneshot) {
        CHECK(show(c.tx.send(1)) == sent);
        CHECK(show(c.tx.send(2)) == back(send_errc::full, 2)); // one value only
        CHECK(show(c.rx.try_recv()) == value(1));
    } else { // unbounded: never full
        for (int i = 0; i < 100; ++i) REQUIRE(show(c.tx.send(i)) == sent);
        CHECK(c.rx.size() == 100);
        CHECK(show(c.rx.try_recv()) == value(0));
    }
    drop(c.rx);
    CHECK(show(push(c, 4)) == back(send_errc::disconnected, 4));
}

// ---- blocking calls -----------------------------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("matrix: blocking_send and blocking_recv between two threads", "[matrix]",
                        kinds) {
    using K = TestType;
    INFO(K::name);
    { // the value, whichever thread comes first
        channel<K> c;
        std::optional<cochan::send_result<int>> s; // checked after join: Catch2 is one thread
        std::thread sender([&] { s = blocking_push(c, 7); });
        auto r = c.rx.blocking_recv();
        sender.join();
        CHECK(show(r) == value(7));
        REQUIRE(s);
        CHECK(show(*s) == sent);
    }
    { // woken by a stop request from another thread (or cancelled at once, if it came first)
        channel<K> c;
        cochan::default_stop_source stop;
        std::thread stopper([&] { stop.request_stop(); });
        auto r = c.rx.blocking_recv(stop.get_token());
        stopper.join();
        CHECK(show(r) == show(recv_errc::cancelled));
    }
    { // woken by the last sender going
        channel<K> c;
        std::thread closer([&] { drop(c.tx); });
        auto r = c.rx.blocking_recv();
        closer.join();
        CHECK(show(r) == show(recv_errc::disconnected));
    }
    if constexpr (K::has_capacity) { // a blocking send waits for room
        channel<K> c;
        fill(c);
        std::optional<cochan::recv_result<int>> taken;
        std::thread receiver([&] { taken = c.rx.blocking_recv(); });
        auto s = c.tx.blocking_send(9);
        receiver.join();
        CHECK(show(s) == sent);
        REQUIRE(taken);
        CHECK(show(*taken) == value(K::is_rendezvous ? 9 : 100));
    }
    if constexpr (K::has_capacity) { // a blocking send woken by the last receiver going
        channel<K> c;
        fill(c);
        std::thread closer([&] { drop(c.rx); });
        auto s = c.tx.blocking_send(9); // disconnected, whether it waited or came after the drop
        closer.join();
        CHECK(show(s) == back(send_errc::disconnected, 9));
    }
}

namespace {

// How long a blocking call that must return at once may block before `guarded` rescues it (a
// defect, such as a negative timeout overflowing into the far future). Not a timing assertion:
// a correct call never waits for it.
constexpr std::chrono::seconds hang_guard(10);

// Runs `call` (a blocking call that must return without waiting); if it has not returned after
// hang_guard, runs `rescue` on another thread (which ends the wait: drops the other side), so
// that the row fails instead of hanging.
template <class Call, class Rescue> auto guarded(Call call, Rescue rescue) {
    cochan_test::completion_latch returned(1);
    std::thread guard([&] {
        if (!returned.wait_for(hang_guard)) rescue();
    });
    auto r = call();
    returned.count_down();
    guard.join();
    return r;
}

} // namespace

TEMPLATE_LIST_TEST_CASE("matrix: blocking_recv_for and _until: timed_out, a value, disconnected",
                        "[matrix][deadlines]", kinds) {
    using K = TestType;
    INFO(K::name);
    {
        channel<K> c;
        CHECK(show(c.rx.blocking_recv_for(1ms)) == show(recv_errc::timed_out));
        CHECK(show(c.rx.blocking_recv_until(std::chrono::steady_clock::now())) ==
              show(recv_errc::timed_out));
        CHECK(show(c.rx.blocking_recv_until(std::chrono::system_clock::now())) ==
              show(recv_errc::timed_out)); // any clock
        // The most negative timeouts and the earliest deadlines have passed too.
        const auto drop_tx = [&] { drop(c.tx); };
        CHECK(show(guarded([&] { return c.rx.blocking_recv_for(std::chrono::seconds::min()); },
                           drop_tx)) == show(recv_errc::timed_out));
        CHECK(show(guarded(
                  [&] {
                      return c.rx.blocking_recv_until(std::chrono::steady_clock::time_point::min());
                  },
                  drop_tx)) == show(recv_errc::timed_out));
        CHECK(show(guarded(
                  [&] {
                      return c.rx.blocking_recv_until(std::chrono::system_clock::time_point::min());
                  },
                  drop_tx)) == show(recv_errc::timed_out));
        // A deadline already passed still takes a value there (rendezvous: a waiting sender's).
        auto s = offer(c, 7);
        CHECK(show(c.rx.blocking_recv_until(std::chrono::steady_clock::now() - 1h)) == value(7));
        c.settle();
        CHECK(show(s) == sent);
    }
    {
        channel<K> c;
        drop(c.tx);
        CHECK(show(c.rx.blocking_recv_for(1h)) == show(recv_errc::disconnected));
    }
}

TEMPLATE_LIST_TEST_CASE("matrix: blocking_send_for and _until: timed_out with the value back, or "
                        "sent",
                        "[matrix][deadlines]", bounded_kinds) {
    using K = TestType;
    INFO(K::name);
    channel<K> c;
    fill(c);
    CHECK(show(c.tx.blocking_send_for(7, 1ms)) == back(send_errc::timed_out, 7));
    CHECK(show(c.tx.blocking_send_until(8, std::chrono::system_clock::now())) ==
          back(send_errc::timed_out, 8));
    const auto drop_rx = [&] { drop(c.rx); };
    CHECK(show(guarded([&] { return c.tx.blocking_send_for(5, std::chrono::seconds::min()); },
                       drop_rx)) == back(send_errc::timed_out, 5));
    CHECK(show(guarded(
              [&] {
                  return c.tx.blocking_send_until(5, std::chrono::steady_clock::time_point::min());
              },
              drop_rx)) == back(send_errc::timed_out, 5));
    if constexpr (!K::is_rendezvous) {
        CHECK(show(c.rx.try_recv()) == value(100));
        // A deadline already passed still takes a free slot.
        CHECK(show(c.tx.blocking_send_until(9, std::chrono::steady_clock::now() - 1h)) == sent);
    } else { // ... or a waiting receiver
        auto r = co_recv(c.rx);
        CHECK(show(c.tx.blocking_send_until(9, std::chrono::steady_clock::now() - 1h)) == sent);
        c.settle();
        CHECK(show(r) == value(9));
    }
    drop(c.rx);
    CHECK(show(c.tx.blocking_send_for(6, 1h)) == back(send_errc::disconnected, 6));
}

namespace {

// Another thread makes 7 available once `waiting` is set (the test sets it just before it
// blocks); on a rendezvous channel it retries try_send until a receive waits, so the value
// arrives while the receive waits. `over` (set once the receive returned) stops the retries.
template <class K> struct late_sender {
    explicit late_sender(channel<K>& ch) : c(ch) {}

    channel<K>& c;
    // A latch, not std::atomic::wait: libstdc++'s atomic wait can miss a notification where
    // it has no futex (MinGW-w64, CI's mingw stage).
    cochan_test::completion_latch waiting{1};
    std::atomic<bool> over{false};
    std::optional<cochan::send_result<int>> result; // read after join()
    std::thread thread{[this] {
        waiting.wait();
        auto r = push(c, 7);
        while (K::is_rendezvous && !r && r.error().reason == send_errc::full && !over) {
            std::this_thread::yield();
            r = push(c, std::move(r.error().value));
        }
        result.emplace(std::move(r));
    }};

    void start() { waiting.count_down(); }
    void join() {
        over = true;
        thread.join();
    }
};

} // namespace

TEMPLATE_LIST_TEST_CASE("matrix: blocking_recv_for(seconds::max()) and _until(max) wait for a "
                        "value sent later",
                        "[matrix][deadlines]", kinds) {
    // A huge timeout means "wait": steady_clock::now() + seconds::max() overflows, and a
    // deadline computed that way would already have passed.
    using K = TestType;
    INFO(K::name);
    const auto receives = {
        +[](typename channel<K>::receiver& rx) {
            return rx.blocking_recv_for(std::chrono::seconds::max());
        },
        +[](typename channel<K>::receiver& rx) {
            return rx.blocking_recv_for(std::chrono::nanoseconds::max());
        },
        +[](typename channel<K>::receiver& rx) {
            return rx.blocking_recv_for(std::chrono::duration<double>::max());
        },
        +[](typename channel<K>::receiver& rx) {
            return rx.blocking_recv_until(std::chrono::steady_clock::time_point::max());
        },
        +[](typename channel<K>::receiver& rx) {
            return rx.blocking_recv_until(std::chrono::system_clock::time_point::max());
        },
    };
    int which = 0;
    for (auto receive_late : receives) {
        INFO("form " << which++);
        channel<K> c;
        late_sender<K> later{c};
        later.start();
        auto r = receive_late(c.rx);
        later.join();
        CHECK(show(r) == value(7));
        REQUIRE(later.result);
        CHECK(show(*later.result) == sent);
    }
}

TEMPLATE_LIST_TEST_CASE("matrix: blocking_send_for(v, seconds::max()) and _until(max) wait for "
                        "room made later",
                        "[matrix][deadlines]", bounded_kinds) {
    using K = TestType;
    INFO(K::name);
    const auto sends = {
        +[](typename channel<K>::sender& tx) {
            return tx.blocking_send_for(9, std::chrono::seconds::max());
        },
        +[](typename channel<K>::sender& tx) {
            return tx.blocking_send_for(9, std::chrono::duration<double>::max());
        },
        +[](typename channel<K>::sender& tx) {
            return tx.blocking_send_until(9, std::chrono::steady_clock::time_point::max());
        },
        +[](typename channel<K>::sender& tx) {
            return tx.blocking_send_until(9, std::chrono::system_clock::time_point::max());
        },
    };
    int which = 0;
    for (auto send_late : sends) {
        INFO("form " << which++);
        channel<K> c;
        fill(c);
        cochan_test::completion_latch waiting(1);      // not std::atomic::wait: see late_sender
        std::optional<cochan::recv_result<int>> taken; // read after join
        std::thread receiver([&] {
            waiting.wait();
            taken = c.rx.blocking_recv();
        });
        waiting.count_down();
        auto s = send_late(c.tx);
        c.tx.close(); // if the send gave up at once, a rendezvous receiver must not wait forever
        receiver.join();
        CHECK(show(s) == sent);
        REQUIRE(taken);
        CHECK(show(*taken) == value(K::is_rendezvous ? 9 : 100));
    }
}

// ---- recv_many ----------------------------------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("matrix: recv_many and try_recv_many take what is there, or wait for one, "
                        "or say empty, cancelled or disconnected",
                        "[matrix][recv_many]", channel_kinds) {
    using K = TestType;
    INFO(K::name);
    { // try_recv_many
        channel<K> c;
        std::vector<int> out;
        CHECK(show(c.rx.try_recv_many(out, 8)) == show(recv_errc::empty));
        auto s = offer(c, 7); // rendezvous: one waiting sender (SPMC: at most one)
        if constexpr (!K::is_rendezvous) REQUIRE(show(push(c, 8)) == sent);
        CHECK(show(c.rx.try_recv_many(out, 8)) == (K::is_rendezvous ? "1 values" : "2 values"));
        c.settle();
        CHECK(show(s) == sent);
        CHECK(out == (K::is_rendezvous ? std::vector<int>{7} : std::vector<int>{7, 8}));
        drop(c.tx);
        CHECK(show(c.rx.try_recv_many(out, 8)) == show(recv_errc::disconnected));
    }
    { // co_await recv_many waits for the first value
        channel<K> c;
        std::vector<int> out;
        auto r = co_recv_many(c.rx, out);
        CHECK(show(r) == "still waiting");
        auto s = offer(c, 7);
        c.settle();
        CHECK(show(r) == "1 values");
        CHECK(show(s) == sent);
        CHECK(out == std::vector<int>{7});
        auto again = co_recv_many(c.rx, out);
        drop(c.tx);
        c.settle();
        CHECK(show(again) == show(recv_errc::disconnected));
    }
    { // with a stop token: cancelled before or while it waits
        channel<K> c;
        std::vector<int> out;
        cochan::default_stop_source stop;
        auto r = co_recv_many(c.rx, out, stop.get_token());
        stop.request_stop();
        c.settle();
        CHECK(show(r) == show(recv_errc::cancelled));
        CHECK(show(co_recv_many(c.rx, out, stop.get_token())) == show(recv_errc::cancelled));
        CHECK(out.empty());
    }
}

// ---- select -------------------------------------------------------------------------------------

namespace {
// The other channel of each select below: a kind unlike most in the table.
using other_kind = unbounded<mpmc>;
} // namespace

TEMPLATE_LIST_TEST_CASE("matrix: select and try_select over a receiver of each kind and another "
                        "kind's",
                        "[matrix][select]", channel_kinds) {
    using K = TestType;
    INFO(K::name);
    { // try_select: the lowest index that has a value, else empty
        channel<K> a;
        channel<other_kind> b;
        CHECK(show(cochan::try_select(a.rx, b.rx)) == show(recv_errc::empty));
        auto s = offer(a, 7);
        CHECK(show(cochan::try_select(b.rx, a.rx)) == from(1, 7));
        a.settle();
        CHECK(show(s) == sent);
        auto s2 = offer(a, 8);
        REQUIRE(show(push(b, 9)) == sent);
        CHECK(show(cochan::try_select(a.rx, b.rx)) == from(0, 8)); // both have one
        CHECK(show(cochan::try_select(a.rx, b.rx)) == from(1, 9));
        a.settle();
        CHECK(show(s2) == sent);
    }
    { // co_await select waits for either
        channel<K> a;
        channel<other_kind> b;
        auto r = co_select(a.rx, b.rx);
        CHECK(show(r) == "still waiting");
        auto s = offer(a, 7);
        a.settle();
        CHECK(show(r) == from(0, 7)); // select resumes by its own policy, not the bound target
        CHECK(show(s) == sent);
        auto r2 = co_select(b.rx, a.rx);
        REQUIRE(show(push(b, 8)) == sent);
        CHECK(show(r2) == from(0, 8));
        CHECK(show(a.rx.try_recv()) == show(recv_errc::empty)); // the other branch took nothing
    }
    { // with a stop token
        channel<K> a;
        channel<other_kind> b;
        cochan::default_stop_source stop;
        auto r = co_select(stop.get_token(), a.rx, b.rx);
        CHECK(show(r) == "still waiting");
        stop.request_stop();
        CHECK(show(r) == show(recv_errc::cancelled));
        REQUIRE(show(push(b, 9)) == sent);
        CHECK(show(co_select(stop.get_token(), a.rx, b.rx)) == show(recv_errc::cancelled));
        CHECK(show(b.rx.try_recv()) == value(9)); // still there
    }
    { // ended channels are skipped; disconnected once all have ended
        channel<K> a;
        channel<other_kind> b;
        auto r = co_select(a.rx, b.rx);
        drop(a.tx);
        CHECK(show(r) == "still waiting");
        REQUIRE(show(push(b, 9)) == sent);
        CHECK(show(r) == from(1, 9));
        auto r2 = co_select(a.rx, b.rx);
        drop(b.tx);
        CHECK(show(r2) == show(recv_errc::disconnected));
        CHECK(show(cochan::try_select(a.rx, b.rx)) == show(recv_errc::disconnected));
        CHECK(show(co_select(b.rx, a.rx)) == show(recv_errc::disconnected));
    }
    { // two channels of this kind
        channel<K> a, b;
        auto s = offer(b, 7);
        CHECK(show(cochan::try_select(a.rx, b.rx)) == from(1, 7));
        b.settle();
        CHECK(show(s) == sent);
    }
}

namespace {

// One channel of every kind in a list, all alive at once.
template <class List> struct channel_set;
template <class... K> struct channel_set<std::tuple<K...>> {
    std::tuple<channel<K>...> channels;

    static constexpr std::size_t size = sizeof...(K);
    template <class F> decltype(auto) receivers(F f) {
        return std::apply([&](auto&... c) -> decltype(auto) { return f(c.rx...); }, channels);
    }
    template <class F> void each(F f) {
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (f(std::integral_constant<std::size_t, I>(), std::get<I>(channels)), ...);
        }
        (std::index_sequence_for<K...>());
    }
};

} // namespace

TEST_CASE("matrix: one select over a receiver of every channel kind takes each one's value",
          "[matrix][select]") {
    channel_set<channel_kinds> set;
    auto try_all = [&] {
        return set.receivers([](auto&... rx) { return cochan::try_select(rx...); });
    };
    CHECK(show(try_all()) == show(recv_errc::empty));
    set.each([&](auto index, auto& c) {
        INFO(std::remove_reference_t<decltype(c)>::kind::name);
        auto s = offer(c, 10 + int(index));
        CHECK(show(try_all()) == from(index, 10 + int(index)));
        c.settle();
        CHECK(show(s) == sent);
    });
    // Waiting on all of them, for the last one's value.
    auto r = set.receivers([](auto&... rx) { return co_select(rx...); });
    CHECK(show(r) == "still waiting");
    auto& last = std::get<channel_set<channel_kinds>::size - 1>(set.channels);
    auto s = offer(last, 99);
    last.settle();
    CHECK(show(r) == from(channel_set<channel_kinds>::size - 1, 99));
    CHECK(show(s) == sent);
    set.each([](auto, auto& c) { drop(c.tx); });
    CHECK(show(try_all()) == show(recv_errc::disconnected));
}

// ---- resume_on ----------------------------------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("matrix: .resume_on(post) on every awaitable resumes a wait through post, "
                        "and one that did not wait without it",
                        "[matrix]", kinds) {
    using K = TestType;
    INFO(K::name);
    manual_scheduler post;
    { // recv
        channel<K> c;
        auto r = co_recv_via(c.rx, post);
        auto s = offer(c, 7);
        CHECK(show(r) == "still waiting");
        CHECK(post.run_all() == 1);
        CHECK(show(r) == value(7));
        c.settle();
        CHECK(show(s) == sent);
        if constexpr (!K::is_rendezvous && !K::is_oneshot) {
            REQUIRE(show(push(c, 8)) == sent);
            CHECK(show(co_recv_via(c.rx, post)) == value(8)); // at once
            CHECK(post.pending() == 0);
        }
    }
    if constexpr (K::has_capacity) { // send
        channel<K> c;
        fill(c);
        auto s = co_send_via(c.tx, 9, post);
        CHECK(show(c.rx.try_recv()) == value(K::is_rendezvous ? 9 : 100));
        CHECK(show(s) == "still waiting");
        CHECK(post.run_all() == 1);
        CHECK(show(s) == sent);
    }
    if constexpr (!K::is_oneshot) { // recv_many and select
        channel<K> c;
        channel<K> other;
        std::vector<int> out;
        auto many = co_recv_many_via(c.rx, out, post);
        auto s = offer(c, 7);
        CHECK(show(many) == "still waiting");
        CHECK(post.run_all() == 1);
        CHECK(show(many) == "1 values");
        CHECK(out == std::vector<int>{7});
        c.settle();
        CHECK(show(s) == sent);
        auto r = co_select_via(post, other.rx, c.rx);
        auto s2 = offer(c, 8);
        CHECK(show(r) == "still waiting");
        CHECK(post.run_all() == 1);
        CHECK(show(r) == from(1, 8));
        c.settle();
        CHECK(show(s2) == sent);
    }
}

// ---- close --------------------------------------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("matrix: tx.close(): its sends fail, receivers drain, then get "
                        "disconnected, and a waiting one is woken",
                        "[matrix][close]", kinds) {
    using K = TestType;
    INFO(K::name);
    {
        channel<K> c;
        if constexpr (!K::is_rendezvous) REQUIRE(show(push(c, 7)) == sent);
        c.tx.close();
        c.tx.close(); // idempotent
        CHECK(c.tx.is_closed());
        CHECK(c.rx.is_closed() == !K::is_oneshot); // a one-shot's value still waits
        CHECK(show(push(c, 8)) == back(send_errc::disconnected, 8));
        if constexpr (!K::is_rendezvous) CHECK(show(co_recv(c.rx)) == value(7));
        CHECK(show(co_recv(c.rx)) == show(recv_errc::disconnected));
        CHECK(c.rx.is_closed());
    }
    {
        channel<K> c;
        auto r = co_recv(c.rx);
        c.tx.close();
        c.settle();
        CHECK(show(r) == show(recv_errc::disconnected));
    }
}

TEMPLATE_LIST_TEST_CASE("matrix: rx.close(): sends fail with their values back, waiting ones too, "
                        "and receivers drain",
                        "[matrix][close]", channel_kinds) {
    using K = TestType;
    INFO(K::name);
    {
        channel<K> c;
        std::optional<task<cochan::send_result<int>>> waiting;
        if constexpr (K::has_capacity) {
            fill(c);
            waiting.emplace(co_send(c.tx, 9));
        } else {
            REQUIRE(show(push(c, 100)) == sent);
        }
        c.rx.close();
        c.rx.close(); // idempotent
        c.settle();
        if (waiting) CHECK(show(*waiting) == back(send_errc::disconnected, 9));
        CHECK(c.tx.is_closed());
        CHECK(c.rx.is_closed());
        CHECK(show(push(c, 8)) == back(send_errc::disconnected, 8));
        // What was buffered drains (100, and 101 when bounded(2) was filled), then nothing.
        const int buffered = K::has_capacity ? int(K::capacity) : 1;
        for (int i = 0; i < buffered; ++i) CHECK(show(c.rx.try_recv()) == value(100 + i));
        CHECK(show(c.rx.try_recv()) == show(recv_errc::disconnected));
    }
    {
        channel<K> c;
        auto r = co_recv(c.rx);
        c.rx.close();
        c.settle();
        CHECK(show(r) == show(recv_errc::disconnected));
    }
}

// ---- queries ------------------------------------------------------------------------------------

TEMPLATE_LIST_TEST_CASE("matrix: is_closed() through a channel's life", "[matrix]", kinds) {
    using K = TestType;
    INFO(K::name);
    { // every sender gone
        channel<K> c;
        CHECK_FALSE(c.tx.is_closed());
        CHECK_FALSE(c.rx.is_closed());
        drop(c.tx);
        CHECK(c.rx.is_closed());
    }
    { // every receiver gone
        channel<K> c;
        drop(c.rx);
        CHECK(c.tx.is_closed());
    }
    if constexpr (!K::is_rendezvous) { // every sender gone, a value still there
        channel<K> c;
        REQUIRE(show(push(c, 7)) == sent);
        CHECK(c.tx.is_closed() == K::is_oneshot); // a one-shot's one value is sent
        drop(c.tx);
        // A channel receiver: no value will arrive any more. A one-shot receiver: a receive can
        // still produce one.
        CHECK(c.rx.is_closed() == !K::is_oneshot);
        CHECK(show(c.rx.try_recv()) == value(7));
        CHECK(c.rx.is_closed());
    }
    { // every sender gone, a value given back by a receive destroyed after its grant waits
        channel<K> c;
        manual_scheduler later;
        auto doomed = co_recv_via(c.rx, later);
        REQUIRE(show(push(c, 7)) == sent); // granted to `doomed`, which has not resumed
        later.discard_all();
        doomed.reset(); // the value goes back to the channel
        CHECK_FALSE(c.rx.is_closed());
        drop(c.tx);
        CHECK(c.rx.is_closed() == !K::is_oneshot);
        CHECK(show(c.rx.try_recv()) == value(7)); // not lost
        CHECK(c.rx.is_closed());
        CHECK(show(c.rx.try_recv()) == show(recv_errc::disconnected));
    }
}

TEMPLATE_LIST_TEST_CASE("matrix: sender_count() and receiver_count() through a channel's life",
                        "[matrix]", channel_kinds) {
    using K = TestType;
    INFO(K::name);
    channel<K> c;
    const auto counts = [&](std::size_t senders, std::size_t receivers) {
        CHECK(c.tx.sender_count() == senders);
        CHECK(c.rx.sender_count() == senders);
        CHECK(c.tx.receiver_count() == receivers);
        CHECK(c.rx.receiver_count() == receivers);
    };
    counts(1, 1);
    {
        auto rx2 = c.rx; // a clone counts
        counts(1, 2);
        if constexpr (K::multi) {
            auto tx2 = c.tx;
            counts(2, 2);
            tx2.close(); // a closed sender does not count, even before it is destroyed
            counts(1, 2);
        }
    }
    counts(1, 1);
    c.rx.close(); // closes the channel, but the receiver stays connected
    counts(1, 1);
    c.tx.close();
    CHECK(c.rx.sender_count() == 0);
    CHECK(c.rx.receiver_count() == 1);
    drop(c.rx);
    CHECK(c.tx.receiver_count() == 0);
}

TEMPLATE_LIST_TEST_CASE("matrix: size(), empty() and capacity()", "[matrix]", channel_kinds) {
    using K = TestType;
    INFO(K::name);
    channel<K> c;
    CHECK(c.rx.size() == 0);
    CHECK(c.rx.empty());
    CHECK(c.tx.empty());
    if constexpr (K::has_capacity) {
        CHECK(c.tx.capacity() == K::capacity);
        CHECK(c.rx.capacity() == K::capacity);
    }
    auto s = offer(c, 7); // rendezvous: a waiting sender, nothing buffered
    const std::size_t n = K::is_rendezvous ? 0 : 1;
    CHECK(c.rx.size() == n);
    CHECK(c.tx.size() == n);
    CHECK(c.rx.empty() == (n == 0));
    CHECK(show(c.rx.try_recv()) == value(7));
    c.settle();
    CHECK(show(s) == sent);
    CHECK(c.rx.empty());
    if constexpr (!K::is_rendezvous) REQUIRE(show(push(c, 8)) == sent);
    drop(c.rx);
    CHECK(c.tx.size() == 0); // the last receiver took the buffer with it
    CHECK(c.tx.empty());
}
