// The tables and drivers of the Asio adapter's combination matrix (matrix.cpp, matrix_send.cpp,
// matrix_recv_many.cpp, matrix_select.cpp): every operation with every endpoint kind it is
// documented to accept and every completion token, each run on an io_context and checked.
//
// Two tables: `kinds` (the endpoint kinds) and `tokens` (a "driver" per completion token, which
// launches an operation with its token, runs the io_context and returns what the operation
// completed with, as text). A new kind or token is one line in its table, and every operation's
// test case runs it. Outcomes are compared as text ("value 7", "sending on a disconnected
// channel, value 7 back"), the same for both completion conventions, so a failure prints what
// happened.
//
// Compile time: every (operation, endpoint type, token) instantiates the adapter once, and
// little else is instantiated per token: the rows take the drivers as a table of function
// pointers, the coroutine drivers share one co_spawn, and kinds with the same endpoint types
// (bounded and rendezvous) share their drivers. The operations are split over four sources,
// each compiled in well under a minute.
//
// Include after the adapter header and support/asio_flavour.hpp.
#pragma once

#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace asio_matrix {

using cochan::recv_errc;
using cochan::send_errc;
using error_code = adapter::error_code;

// How long a row waits for an operation that never completes (a defect) before it reports
// "never completed" instead of hanging the suite. Not a timing assertion: a correct row never
// waits for it.
inline constexpr std::chrono::seconds hang_guard(10);

// ---- the endpoint kinds -------------------------------------------------------------------------

struct spmc {
    static constexpr const char* name = "spmc";
    static auto bounded() { return cochan::spmc::bounded<int>(2); }
    static auto unbounded() { return cochan::spmc::unbounded<int>(); }
    static auto rendezvous() { return cochan::spmc::rendezvous<int>(); }
};
struct mpmc {
    static constexpr const char* name = "mpmc";
    static auto bounded() { return cochan::mpmc::bounded<int>(2); }
    static auto unbounded() { return cochan::mpmc::unbounded<int>(); }
    static auto rendezvous() { return cochan::mpmc::rendezvous<int>(); }
};

struct kind_traits {
    static constexpr bool has_capacity = false;  // bounded: a send may wait for room
    static constexpr std::size_t capacity = 0;   // where has_capacity
    static constexpr bool is_rendezvous = false; // a send completes only into a receive
    static constexpr bool is_oneshot = false;    // one value: no select, no recv_many
};
template <class F> struct bounded : kind_traits {
    inline static const std::string name = std::string(F::name) + "::bounded(2)";
    static constexpr bool has_capacity = true;
    static constexpr std::size_t capacity = 2;
    static auto make() { return F::bounded(); }
};
template <class F> struct unbounded : kind_traits {
    inline static const std::string name = std::string(F::name) + "::unbounded";
    static auto make() { return F::unbounded(); }
};
template <class F> struct rendezvous : kind_traits {
    inline static const std::string name = std::string(F::name) + "::rendezvous";
    static constexpr bool has_capacity = true;
    static constexpr bool is_rendezvous = true;
    static auto make() { return F::rendezvous(); }
};
struct oneshot : kind_traits {
    inline static const std::string name = "oneshot";
    static constexpr bool is_oneshot = true;
    static auto make() { return cochan::oneshot<int>(); }
};

// THE KINDS TABLE: one per line.
using kinds = std::tuple<bounded<spmc>,    //
                         unbounded<spmc>,  //
                         rendezvous<spmc>, //
                         bounded<mpmc>,    //
                         unbounded<mpmc>,  //
                         rendezvous<mpmc>, //
                         oneshot>;

template <class List, template <class> class Keep> struct filter;
template <class... K, template <class> class Keep> struct filter<std::tuple<K...>, Keep> {
    using type = decltype(std::tuple_cat(
        std::declval<std::conditional_t<Keep<K>::value, std::tuple<K>, std::tuple<>>>()...));
};
template <class K> struct is_channel : std::bool_constant<!K::is_oneshot> {};
// The kinds select and recv_many take (a one-shot receiver is not a channel_receiver:
// compile_fail/async_select_oneshot.cpp).
using channel_kinds = typename filter<kinds, is_channel>::type;

// A new channel's two ends. By endpoint types, not by kind, so that kinds with the same types
// (bounded and rendezvous) share the drivers' instantiations.
template <class Ends> struct endpoints {
    template <class Make> explicit endpoints(Make make) : e(make()) {}

    Ends e;
    typename Ends::first_type& tx = e.first;
    typename Ends::second_type& rx = e.second;
};
template <class K> using endpoints_of = endpoints<decltype(K::make())>;
template <class K> struct channel : endpoints_of<K> {
    channel() : endpoints_of<K>(&K::make) {}
};
// What a select runs over: a channel of the kind under test (`a`), and one of another (`b`).
template <class Ends> struct select_pair {
    template <class Make> explicit select_pair(Make make) : a(make) {}

    endpoints<Ends> a;
    channel<unbounded<mpmc>> b;
};
template <class K> using select_pair_of = select_pair<decltype(K::make())>;
template <class K> struct channel_pair : select_pair_of<K> {
    channel_pair() : select_pair_of<K>(&K::make) {}
};

// What a batch receive runs over: a channel, and the container it appends to.
template <class Ends> struct batch_endpoints : endpoints<Ends> {
    using endpoints<Ends>::endpoints;

    std::vector<int> out;
    std::size_t max = 8;
};
template <class K> using batch_endpoints_of = batch_endpoints<decltype(K::make())>;
template <class K> struct batch_channel : batch_endpoints_of<K> {
    batch_channel() : batch_endpoints_of<K>(&K::make) {}
};

template <class Endpoint> void drop(Endpoint& e) {
    auto gone = std::move(e);
}

// ---- outcomes as text ---------------------------------------------------------------------------

inline std::string value(int v) {
    return "value " + std::to_string(v);
}
inline std::string from(std::size_t index, int v) {
    return "from " + std::to_string(index) + ": " + value(v);
}
inline const std::string sent = "sent";
inline std::string show(recv_errc e) {
    return cochan::to_string(e);
}
inline std::string back(send_errc e, int v) {
    return std::string(cochan::to_string(e)) + ", " + value(v) + " back";
}
// An `_ec` operation's error thrown by use_awaitable or use_future: a send's value is lost.
inline std::string thrown(const std::string& message) {
    return message + " (thrown)";
}

// The result convention.
inline std::string show(const cochan::recv_result<int>& r) {
    return r ? value(*r) : show(r.error());
}
inline std::string show(const cochan::send_result<int>& r) {
    return r ? sent : back(r.error().reason, r.error().value);
}
inline std::string show(const std::variant<int, int>& v) {
    return from(v.index(), std::visit([](int x) { return x; }, v));
}
inline std::string show(const cochan::recv_result<std::variant<int, int>>& r) {
    return r ? show(*r) : show(r.error());
}
inline std::string show(const cochan::recv_result<std::size_t>& r) {
    return r ? std::to_string(*r) + " values" : show(r.error());
}
// The error_code convention (an error's message is cochan's to_string, in both flavours), and
// what use_awaitable returns for it (the argument after a clear code).
inline std::string show(int v) {
    return value(v);
}
inline std::string show(const std::optional<int>& back) {
    return back ? "no error, yet " + value(*back) + " back" : sent;
}
inline std::string show(const error_code& ec, int v) {
    if (!ec) return value(v);
    return v == 0 ? ec.message() : ec.message() + ", yet " + value(v);
}
inline std::string show(std::size_t n) {
    return std::to_string(n) + " values";
}
inline std::string show(const error_code& ec, std::size_t n) {
    if (!ec) return show(n);
    return n == 0 ? ec.message() : ec.message() + ", yet " + show(n);
}
inline std::string show(const error_code& ec, const std::optional<int>& b) {
    if (!ec) return show(b);
    return b ? ec.message() + ", " + value(*b) + " back" : ec.message() + ", value lost";
}
inline std::string show(const error_code& ec, const std::variant<int, int>& v) {
    if (!ec) return show(v);
    return v == std::variant<int, int>() ? ec.message() : ec.message() + ", yet a value";
}
// as_tuple: the arguments, packed.
template <class... A> std::string show(const std::tuple<A...>& t) {
    return std::apply([](const auto&... a) { return show(a...); }, t);
}
template <class R> std::string show(const cochan_test::task<R>& t) {
    return t.done() ? show(t.result()) : "still waiting";
}

// ---- the operations -----------------------------------------------------------------------------

// Each starts its operation on an endpoints (or a select_pair) with `token`; `v` is what a send
// sends. `ec`: the error_code convention.
struct recv_op {
    static constexpr const char* name = "async_recv";
    static constexpr bool ec = false;
    template <class C, class Token> static auto start(C& c, int, Token&& token) {
        return adapter::async_recv(c.rx, std::forward<Token>(token));
    }
};
struct recv_ec_op {
    static constexpr const char* name = "async_recv_ec";
    static constexpr bool ec = true;
    template <class C, class Token> static auto start(C& c, int, Token&& token) {
        return adapter::async_recv_ec(c.rx, std::forward<Token>(token));
    }
};
struct send_op {
    static constexpr const char* name = "async_send";
    static constexpr bool ec = false;
    template <class C, class Token> static auto start(C& c, int v, Token&& token) {
        return adapter::async_send(c.tx, v, std::forward<Token>(token));
    }
};
struct send_ec_op {
    static constexpr const char* name = "async_send_ec";
    static constexpr bool ec = true;
    template <class C, class Token> static auto start(C& c, int v, Token&& token) {
        return adapter::async_send_ec(c.tx, v, std::forward<Token>(token));
    }
};
struct recv_many_op {
    static constexpr const char* name = "async_recv_many";
    static constexpr bool ec = false;
    template <class C, class Token> static auto start(C& c, int, Token&& token) {
        return adapter::async_recv_many(c.rx, c.out, c.max, std::forward<Token>(token));
    }
};
struct recv_many_ec_op {
    static constexpr const char* name = "async_recv_many_ec";
    static constexpr bool ec = true;
    template <class C, class Token> static auto start(C& c, int, Token&& token) {
        return adapter::async_recv_many_ec(c.rx, c.out, c.max, std::forward<Token>(token));
    }
};
struct select_op {
    static constexpr const char* name = "async_select";
    static constexpr bool ec = false;
    template <class C, class Token> static auto start(C& c, int, Token&& token) {
        return adapter::async_select(std::forward<Token>(token), c.a.rx, c.b.rx);
    }
};
struct select_ec_op {
    static constexpr const char* name = "async_select_ec";
    static constexpr bool ec = true;
    template <class C, class Token> static auto start(C& c, int, Token&& token) {
        return adapter::async_select_ec(std::forward<Token>(token), c.a.rx, c.b.rx);
    }
};

// ---- the completion tokens ----------------------------------------------------------------------

// What the test does once the operation has started (and waits, if it must): send the value
// it waits for, drop the other side, or nothing.
using peer_fn = std::function<void()>;
inline const peer_fn nothing = [] {};

// Runs what was started on `io` until it waits, then `peer`, then the rest.
inline void run_io(asio::io_context& io, const peer_fn& peer) {
    io.poll();
    peer();
    io.restart();
    io.run_for(hang_guard);
}

// Runs `body` (a coroutine returning the outcome) on `io` as run_io does. A std::function, so
// that co_spawn is instantiated once, not once per row.
inline std::string in_coroutine(asio::io_context& io, const peer_fn& peer,
                                std::function<asio::awaitable<std::string>()> body) {
    std::string out = "never completed";
    std::exception_ptr failure;
    asio::co_spawn(io, std::move(body), [&](std::exception_ptr e, std::string s) {
        failure = std::move(e);
        out = std::move(s);
    });
    run_io(io, peer);
    if (failure) std::rethrow_exception(failure);
    return out;
}

// Each driver: `run<Op>(io, c, v, peer)` launches Op with its token and returns the outcome.
// `throws`: an `_ec` operation's error arrives as an exception (a send's value lost with it).

// A plain lambda: no associated executor, so it runs on asio::system_executor's threads; the
// test waits for it through a promise.
struct callback {
    static constexpr const char* name = "callback";
    static constexpr bool throws = false;
    template <class Op, class C>
    static std::string run(asio::io_context& io, C& c, int v, const peer_fn& peer) {
        auto done = std::make_shared<std::promise<std::string>>();
        auto outcome = done->get_future();
        Op::start(c, v, [done](auto&&... a) { done->set_value(show(a...)); });
        run_io(io, peer);
        if (outcome.wait_for(hang_guard) != std::future_status::ready) return "never completed";
        return outcome.get();
    }
};
struct use_awaitable {
    static constexpr const char* name = "use_awaitable";
    static constexpr bool throws = true;
    template <class Op, class C>
    static std::string run(asio::io_context& io, C& c, int v, const peer_fn& peer) {
        return in_coroutine(io, peer, [&]() -> asio::awaitable<std::string> {
            try {
                co_return show(co_await Op::start(c, v, asio::use_awaitable));
            } catch (const cochan_test::system_error& e) {
                co_return thrown(e.code().message());
            }
        });
    }
};
// Created first, then launched with a callback bound to `io`, which never runs inside the
// launching call (the outcome says if it does).
struct deferred {
    static constexpr const char* name = "deferred";
    static constexpr bool throws = false;
    template <class Op, class C>
    static std::string run(asio::io_context& io, C& c, int v, const peer_fn& peer) {
        auto op = Op::start(c, v, cochan_test::deferred);
        std::string out = "never completed";
        bool initiating = true;
        std::move(op)(asio::bind_executor(io, [&out, &initiating](auto&&... a) {
            out = show(a...);
            if (initiating) out += " (inside the initiating function)";
        }));
        initiating = false;
        run_io(io, peer);
        return out;
    }
};
// Bound to `io`, which another thread runs while this one waits for the future. That thread is
// joined before get(): ThreadSanitizer cannot see libstdc++'s exception_ptr reference count, so
// an exception must not pass between threads without a synchronisation it sees.
struct use_future {
    static constexpr const char* name = "use_future";
    static constexpr bool throws = true;
    template <class Op, class C>
    static std::string run(asio::io_context& io, C& c, int v, const peer_fn& peer) {
        auto outcome = Op::start(c, v, asio::bind_executor(io, asio::use_future));
        peer(); // the operation started at once: nothing to run first
        std::thread runner([&io] { io.run_for(hang_guard); });
        const bool ready = outcome.wait_for(hang_guard) == std::future_status::ready;
        runner.join();
        if (!ready) return "never completed";
        try {
            return show(outcome.get());
        } catch (const cochan_test::system_error& e) {
            return thrown(e.code().message());
        }
    }
};
struct as_tuple {
    static constexpr const char* name = "as_tuple(use_awaitable)";
    static constexpr bool throws = false;
    template <class Op, class C>
    static std::string run(asio::io_context& io, C& c, int v, const peer_fn& peer) {
        return in_coroutine(io, peer, [&]() -> asio::awaitable<std::string> {
            co_return show(co_await Op::start(c, v, cochan_test::as_tuple(asio::use_awaitable)));
        });
    }
};
// The `_ec` operations store their code in `ec`; the result operations (no code in their
// signature) leave it as it was, clear: the outcome says if not.
struct redirect_error {
    static constexpr const char* name = "redirect_error(use_awaitable, ec)";
    static constexpr bool throws = false;
    template <class Op, class C>
    static std::string run(asio::io_context& io, C& c, int v, const peer_fn& peer) {
        return in_coroutine(io, peer, [&]() -> asio::awaitable<std::string> {
            error_code ec;
            auto r = co_await Op::start(c, v, asio::redirect_error(asio::use_awaitable, ec));
            if constexpr (Op::ec) {
                co_return show(ec, r);
            } else {
                co_return ec ? show(r) + " (ec set: " + ec.message() + ")" : show(r);
            }
        });
    }
};
// awaitable_operators' `||` against a timer that does not fire first (the operation's
// cancellation slot is connected, so it takes the posted path). An `_ec` operation goes in
// as_tuple(use_awaitable): `||` waits for one *success*, so an error thrown by use_awaitable
// would leave it waiting for the timer.
struct or_timer {
    static constexpr const char* name = "use_awaitable (as_tuple for _ec) || timer";
    static constexpr bool throws = false;
    template <class Op, class C>
    static std::string run(asio::io_context& io, C& c, int v, const peer_fn& peer) {
        return in_coroutine(io, peer, [&]() -> asio::awaitable<std::string> {
            using namespace asio::experimental::awaitable_operators;
            asio::steady_timer timer(co_await asio::this_coro::executor, hang_guard / 2);
            auto op = [&] {
                if constexpr (Op::ec) {
                    return Op::start(c, v, cochan_test::as_tuple(asio::use_awaitable));
                } else {
                    return Op::start(c, v, asio::use_awaitable);
                }
            };
            auto r = co_await (op() || timer.async_wait(asio::use_awaitable));
            co_return r.index() == 0 ? show(std::get<0>(r)) : "the timer fired first";
        });
    }
};
// A callback bound to a strand of `io`, which must run it there, and never inside the
// initiating function (the outcome says if not).
struct on_strand {
    static constexpr const char* name = "bind_executor(strand, callback)";
    static constexpr bool throws = false;
    template <class Op, class C>
    static std::string run(asio::io_context& io, C& c, int v, const peer_fn& peer) {
        auto strand = asio::make_strand(io);
        std::string out = "never completed";
        bool initiating = true;
        Op::start(c, v, asio::bind_executor(strand, [&out, &initiating, strand](auto&&... a) {
                      out = show(a...);
                      if (initiating) out += " (inside the initiating function)";
                      if (!strand.running_in_this_thread()) out += " (not on the strand)";
                  }));
        initiating = false;
        run_io(io, peer);
        return out;
    }
};

// THE TOKENS TABLE: one driver per line.
using tokens = std::tuple<callback,       //
                          use_awaitable,  //
                          deferred,       //
                          use_future,     //
                          as_tuple,       //
                          redirect_error, //
                          or_timer,       //
                          on_strand>;

// A driver as the rows use it, for operation Op on endpoints of type C: the tokens table as
// values, so that the rows are instantiated once per operation and kind, not once per token.
template <class C> struct driver {
    const char* name;
    bool throws;
    std::string (*run)(asio::io_context&, C&, int, const peer_fn&);
};
template <class Op, class C, class... Token>
std::array<driver<C>, sizeof...(Token)> drivers_of(std::tuple<Token...>*) {
    return {driver<C>{Token::name, Token::throws, &Token::template run<Op, C>}...};
}
template <class Op, class C> const auto& drivers() {
    static const auto all = drivers_of<Op, C>(static_cast<tokens*>(nullptr));
    return all;
}

// What a row expects when its operation fails with `e`: `thrown` for an `_ec` operation whose
// token throws.
inline std::string error(bool thrown_by_token, recv_errc e) {
    return thrown_by_token ? thrown(show(e)) : show(e);
}
inline std::string error(bool thrown_by_token, send_errc e, int v) {
    return thrown_by_token ? thrown(cochan::to_string(e)) : back(e, v);
}

// ---- the other side, without Asio ---------------------------------------------------------------

// Sends without waiting: try_send on a bounded channel, send on the others.
template <class C> cochan::send_result<int> push(C& c, int v) {
    if constexpr (requires { c.tx.try_send(v); }) {
        return c.tx.try_send(v);
    } else {
        return c.tx.send(v);
    }
}
// Makes `v` available to a receive before it starts: sent, or (rendezvous) a coroutine's send
// that waits for the receive.
template <class C> cochan_test::task<cochan::send_result<int>> offer(C& c, int v) {
    if constexpr (requires { c.tx.try_send(v); }) {
        co_return co_await c.tx.send(v);
    } else {
        co_return c.tx.send(v);
    }
}
// Fills a bounded channel, so that a send waits (a rendezvous channel always is "full").
template <class K> void fill(channel<K>& c) {
    if constexpr (K::has_capacity) {
        for (std::size_t i = 0; i < K::capacity; ++i)
            REQUIRE(show(c.tx.try_send(100 + int(i))) == sent);
    }
}

} // namespace asio_matrix
