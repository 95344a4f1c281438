// The Asio adapter's combination matrix (tables and drivers: matrix.hpp): async_recv and
// async_recv_ec with every endpoint kind and every token, and receives and selects created by a
// lazy token and launched after the last receiver is gone. matrix_send.cpp,
// matrix_recv_many.cpp and matrix_select.cpp run the other operations; the four share one pair
// of tables.
#if COCHAN_TEST_BOOST_ASIO
#include <cochan/boost_asio.hpp>
#else
#include <cochan/asio.hpp>
#endif

#include "support/asio_flavour.hpp"

#include "asio/matrix.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <utility>

using namespace asio_matrix;

namespace {

template <class Op, class K> void recv_rows() {
    for (const auto& d : drivers<Op, endpoints_of<K>>()) {
        INFO(K::name << ", " << Op::name << ", " << d.name);
        const auto disconnected = error(Op::ec && d.throws, recv_errc::disconnected);
        { // a value there (rendezvous: a sender waiting with it)
            asio::io_context io;
            channel<K> c;
            auto s = offer(c, 7);
            CHECK(d.run(io, c, 0, nothing) == value(7));
            CHECK(show(s) == sent);
        }
        { // a value sent while it waits
            asio::io_context io;
            channel<K> c;
            std::string s = "not sent";
            CHECK(d.run(io, c, 0, [&] { s = show(push(c, 8)); }) == value(8));
            CHECK(s == sent);
        }
        { // every sender gone
            asio::io_context io;
            channel<K> c;
            drop(c.tx);
            CHECK(d.run(io, c, 0, nothing) == disconnected);
        }
        { // the last sender gone while it waits
            asio::io_context io;
            channel<K> c;
            CHECK(d.run(io, c, 0, [&] { drop(c.tx); }) == disconnected);
        }
    }
}

} // namespace

TEMPLATE_LIST_TEST_CASE("asio matrix: async_recv and async_recv_ec with every token",
                        "[asio][matrix]", kinds) {
    recv_rows<recv_op, TestType>();
    recv_rows<recv_ec_op, TestType>();
}

TEMPLATE_LIST_TEST_CASE("asio matrix: a receive or select created by a lazy token, launched after "
                        "the last receiver is gone, completes disconnected",
                        "[asio][matrix]", kinds) {
    // The senders live on, so nothing but the operation's own check can end it: run() must
    // return (the guard is only there to report the defect instead of hanging).
    using K = TestType;
    INFO(K::name);
    const auto launch = [](auto op) {
        asio::io_context io;
        std::string out = "never completed";
        std::move(op)(asio::bind_executor(io, [&out](auto&&... a) { out = show(a...); }));
        io.run_for(hang_guard);
        CHECK(io.stopped());
        return out;
    };
    {
        channel<K> c;
        auto op = recv_op::start(c, 0, cochan_test::deferred);
        auto op_ec = recv_ec_op::start(c, 0, cochan_test::deferred);
        drop(c.rx);
        const std::string out = launch(std::move(op)), out_ec = launch(std::move(op_ec));
        CHECK(out == show(recv_errc::disconnected));
        CHECK(out_ec == show(recv_errc::disconnected));
        CHECK(c.tx.is_closed());
    }
    { // a use_awaitable awaitable is lazy too: it does nothing until awaited
        asio::io_context io;
        channel<K> c;
        auto awaitable = recv_op::start(c, 0, asio::use_awaitable);
        drop(c.rx);
        auto shared = std::make_shared<decltype(awaitable)>(std::move(awaitable));
        CHECK(in_coroutine(io, nothing, [shared]() -> asio::awaitable<std::string> {
                  co_return show(co_await std::move(*shared));
              }) == show(recv_errc::disconnected));
        CHECK(io.stopped());
    }
    if constexpr (!K::is_oneshot) {
        channel_pair<K> c;
        auto op = select_op::start(c, 0, cochan_test::deferred);
        auto op_ec = select_ec_op::start(c, 0, cochan_test::deferred);
        drop(c.a.rx);
        drop(c.b.rx);
        const std::string out = launch(std::move(op)), out_ec = launch(std::move(op_ec));
        CHECK(out == show(recv_errc::disconnected));
        CHECK(out_ec == show(recv_errc::disconnected));
    }
}
