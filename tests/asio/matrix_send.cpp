// The Asio adapter's combination matrix (tables and drivers: matrix.hpp): async_send and
// async_send_ec with every endpoint kind, one-shot senders included, and every token.
#if COCHAN_TEST_BOOST_ASIO
#include <cochan/boost_asio.hpp>
#else
#include <cochan/asio.hpp>
#endif

#include "support/asio_flavour.hpp"

#include "asio/matrix.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <utility>

using namespace asio_matrix;

namespace {

template <class Op, class K> void send_rows() {
    for (const auto& d : drivers<Op, endpoints_of<K>>()) {
        INFO(K::name << ", " << Op::name << ", " << d.name);
        const bool throws = Op::ec && d.throws;
        { // sent at once (rendezvous: into a receive, which it waits for)
            asio::io_context io;
            channel<K> c;
            std::string got = "nothing received";
            const peer_fn take = [&] { got = show(c.rx.try_recv()); };
            CHECK(d.run(io, c, 7, K::is_rendezvous ? take : nothing) == sent);
            if (!K::is_rendezvous) take();
            CHECK(got == value(7));
        }
        if constexpr (K::has_capacity && !K::is_rendezvous) { // sent once there is room
            asio::io_context io;
            channel<K> c;
            fill(c);
            std::string got = "nothing received";
            CHECK(d.run(io, c, 7, [&] { got = show(c.rx.try_recv()); }) == sent);
            CHECK(got == value(100));
            CHECK(show(c.rx.try_recv()) == value(101));
            CHECK(show(c.rx.try_recv()) == value(7));
        }
        { // every receiver gone
            asio::io_context io;
            channel<K> c;
            drop(c.rx);
            CHECK(d.run(io, c, 7, nothing) == error(throws, send_errc::disconnected, 7));
        }
        if constexpr (K::has_capacity) { // the last receiver gone while it waits
            asio::io_context io;
            channel<K> c;
            fill(c);
            CHECK(d.run(io, c, 7, [&] { drop(c.rx); }) ==
                  error(throws, send_errc::disconnected, 7));
        }
        if constexpr (K::is_oneshot) { // a value was already sent: full, at once
            asio::io_context io;
            channel<K> c;
            REQUIRE(show(c.tx.send(1)) == sent);
            CHECK(d.run(io, c, 7, nothing) == error(throws, send_errc::full, 7));
            CHECK(show(c.rx.try_recv()) == value(1));
        }
    }
}

} // namespace

TEMPLATE_LIST_TEST_CASE("asio matrix: async_send and async_send_ec with every token",
                        "[asio][matrix]", kinds) {
    send_rows<send_op, TestType>();
    send_rows<send_ec_op, TestType>();
}
