// Documented combinations of the adapter that once did not compile or misbehaved, each as it
// was found: a one-shot through async_recv / async_send, the result-convention operations with
// redirect_error(use_awaitable), an operation launched after the last receiver was gone, and an
// allocation failure while an operation connects its cancellation slot. The combination matrix
// (matrix.cpp) runs every operation with every endpoint kind and token; these pin each defect.
#if COCHAN_TEST_BOOST_ASIO
#include <cochan/boost_asio.hpp>
#else
#include <cochan/asio.hpp>
#endif

#include "support/asio_flavour.hpp"

#include "support/alloc_hook.hpp"

#include <catch2/catch.hpp>

#include <new>
#include <optional>
#include <utility>
#include <variant>

using adapter::async_recv;
using adapter::async_recv_ec;
using adapter::async_select;
using adapter::async_send;
using adapter::async_send_ec;

namespace {
/// `h` runs on `io` (a handler with no executor of its own would run on the system executor).
template <class H> auto on(asio::io_context& io, H h) {
    return asio::bind_executor(io, std::move(h));
}
} // namespace

TEST_CASE("asio: a one-shot receiver takes async_recv and async_recv_ec",
          "[asio][oneshot][last-sender-gone]") {
    asio::io_context io;
    { // waiting, then sent: the posted path
        auto [tx, rx] = cochan::oneshot<int>();
        std::optional<cochan::recv_result<int>> got;
        async_recv(rx, on(io, [&](cochan::recv_result<int> r) { got = std::move(r); }));
        REQUIRE(tx.send(1));
        io.run();
        io.restart();
        REQUIRE(got);
        CHECK(**got == 1);
    }
    { // sent, then received: the immediate path, in a coroutine (the inline path)
        auto [tx, rx] = cochan::oneshot<int>();
        REQUIRE(tx.send(2));
        int got = 0;
        asio::co_spawn(
            io,
            [&rx = rx, &got]() -> asio::awaitable<void> {
                auto r = co_await async_recv(rx, asio::use_awaitable);
                got = r ? *r : -1;
                auto again = co_await async_recv(rx, asio::use_awaitable); // taken already
                if (!again && again.error() == cochan::recv_errc::disconnected) got += 10;
            },
            asio::detached);
        io.run();
        io.restart();
        CHECK(got == 12);
    }
    { // the error_code flavour, with the callback immediate path and a sender gone
        auto [tx, rx] = cochan::oneshot<int>();
        REQUIRE(tx.send(3));
        std::optional<int> got;
        async_recv_ec(rx, on(io, [&](adapter::error_code ec, int v) { got = ec ? -1 : v; }));
        io.run();
        io.restart();
        CHECK(got == 3);
        auto [tx2, rx2] = cochan::oneshot<int>();
        { auto gone = std::move(tx2); }
        adapter::error_code code;
        async_recv_ec(rx2, on(io, [&](adapter::error_code ec, int) { code = ec; }));
        io.run();
        io.restart();
        CHECK(code == cochan::recv_errc::disconnected);
    }
}

TEST_CASE("asio: a one-shot sender takes async_send: sent, full, or disconnected with the value "
          "back",
          "[asio][oneshot][last-receiver-gone]") {
    asio::io_context io;
    auto [tx, rx] = cochan::oneshot<int>();
    std::optional<cochan::send_result<int>> first;
    std::optional<cochan::send_result<int>> second;
    async_send(tx, 1, on(io, [&](cochan::send_result<int> r) { first = std::move(r); }));
    async_send(tx, 2, on(io, [&](cochan::send_result<int> r) { second = std::move(r); }));
    CHECK_FALSE(first); // never inside the initiating function
    io.run();
    io.restart();
    REQUIRE(first);
    CHECK(*first);
    REQUIRE(second);
    REQUIRE_FALSE(*second);
    CHECK(second->error().reason == cochan::send_errc::full);
    CHECK(second->error().value == 2);
    CHECK(*rx.try_recv() == 1);

    auto [tx2, rx2] = cochan::oneshot<int>();
    { auto gone = std::move(rx2); }
    adapter::error_code code;
    std::optional<int> back;
    async_send_ec(tx2, 3, on(io, [&](adapter::error_code ec, std::optional<int> v) {
                      code = ec;
                      back = v;
                  }));
    io.run();
    CHECK(code == cochan::send_errc::disconnected);
    CHECK(back == 3);
}

TEST_CASE("asio: async_recv and async_send take redirect_error(use_awaitable, ec)",
          "[asio][tokens]") {
    // The result-convention operations have no error code to redirect: the result comes back
    // and `ec` is left as it was, on the inline path (a value there) and the posted one alike.
    asio::io_context io;
    auto [tx, rx] = cochan::mpmc::bounded<int>(1);
    int got = 0;
    bool ec_untouched = false;
    asio::co_spawn(
        io,
        [&tx = tx, &rx = rx, &got, &ec_untouched]() -> asio::awaitable<void> {
            adapter::error_code ec;
            auto token = asio::redirect_error(asio::use_awaitable, ec);
            auto sent = co_await async_send(tx, 5, token); // a free cell: inline
            auto r = co_await async_recv(rx, token);       // a value there: inline
            got = sent && r ? *r : -1;
            asio::post(co_await asio::this_coro::executor, [&tx] { (void)tx.try_send(6); });
            auto later = co_await async_recv(rx, token); // waits: the posted path
            got = later ? got * 10 + *later : -1;
            ec_untouched = !ec;
        },
        asio::detached);
    io.run();
    CHECK(got == 56);
    CHECK(ec_untouched);
}

TEST_CASE("asio: a receive launched after the last receiver is gone completes disconnected",
          "[asio][lifetime][last-receiver-gone]") {
    // A lazy token stores the operation's source, which keeps the channel alive; launched once
    // the last receiver is gone (a sender still lives), the receive and the select must complete
    // at once, not wait for a value no receiver can ever take.
    asio::io_context io;
    auto [tx, rx] = cochan::spmc::bounded<int>(2);
    auto [tx2, rx2] = cochan::mpmc::unbounded<int>();
    auto recv = async_recv(rx, cochan_test::deferred);
    auto select = async_select(cochan_test::deferred, rx, rx2);
    { auto gone = std::move(rx); }
    { auto gone = std::move(rx2); }
    std::optional<cochan::recv_result<int>> got;
    std::optional<cochan::recv_result<std::variant<int, int>>> selected;
    std::move(recv)(on(io, [&](cochan::recv_result<int> r) { got = std::move(r); }));
    std::move(select)(
        on(io, [&](cochan::recv_result<std::variant<int, int>> r) { selected = std::move(r); }));
    io.poll(); // runs what was posted; a receive left waiting would leave `got` empty
    REQUIRE(got);
    CHECK(got->error() == cochan::recv_errc::disconnected);
    REQUIRE(selected);
    CHECK(selected->error() == cochan::recv_errc::disconnected);
    CHECK(io.stopped()); // no work left: run() would return
    CHECK(tx.is_closed());
    CHECK(tx2.is_closed());
}

#ifndef COCHAN_TEST_NO_ALLOC_HOOK
TEST_CASE("asio: an allocation failure while an operation starts leaves nothing behind",
          "[asio][faults][errors-and-misuse]") {
    // The k-th allocation of the initiating call fails, for k = 0, 1, ... until the call no
    // longer allocates that many times: the operation, the registry, the cancellation slot's
    // handler (the slot connection used to run outside the clean-up, leaving a registered
    // operation and its work guard behind). Each failure must propagate with nothing enlisted,
    // linked or held: the io_context has no work left, and the next value is not granted to a
    // ghost. ASan's leak check sees any memory left.
    auto launch = [](asio::io_context& io, int kind, auto& rx, auto& rx2, auto& tx,
                     asio::cancellation_signal& signal, bool& ran) {
        auto handler =
            asio::bind_cancellation_slot(signal.slot(), on(io, [&ran](auto&&...) { ran = true; }));
        if (kind == 0) {
            async_recv(rx, std::move(handler));
        } else if (kind == 1) {
            async_select(std::move(handler), rx, rx2);
        } else {
            async_send(tx, 9, std::move(handler)); // waits: the channel is full
        }
    };
    for (int kind = 0; kind < 3; ++kind) { // 0: recv, 1: select, 2: send
        bool started = false;
        for (long k = 0; !started && k < 64; ++k) {
            INFO("operation " << kind << ", allocation " << k + 1 << " fails");
            asio::io_context io;
            auto [tx, rx] = cochan::mpmc::bounded<int>(1);
            auto [tx2, rx2] = cochan::mpmc::bounded<int>(1);
            if (kind == 2) REQUIRE(tx.try_send(1));
            asio::cancellation_signal signal;
            bool ran = false;
            bool threw = false;
            cochan_test::fail_alloc_after = k;
            try {
                launch(io, kind, rx, rx2, tx, signal, ran);
            } catch (const std::bad_alloc&) {
                threw = true;
            }
            const bool fired = cochan_test::fail_alloc_after < 0;
            cochan_test::fail_alloc_after = -1;
            if (!fired) { // the call made fewer allocations than k + 1: it started
                started = true;
                signal.emit(asio::cancellation_type::terminal);
                io.run();
                CHECK(ran);
            } else {
                REQUIRE(threw);
                io.poll();
                CHECK(io.stopped()); // no work guard left behind
                CHECK_FALSE(ran);
                // Nothing left linked: a value sent now is buffered, not granted to a ghost.
                if (kind == 2) {
                    CHECK(*rx.try_recv() == 1);
                    CHECK(rx.try_recv().error() == cochan::recv_errc::empty);
                } else {
                    REQUIRE(tx.try_send(7));
                    CHECK(rx.size() == 1);
                    CHECK(*rx.try_recv() == 7);
                }
            }
        }
        CHECK(started);
    }
}
#endif
