// The Asio adapter's combination matrix (tables and drivers: matrix.hpp): async_recv_many and
// async_recv_many_ec over a receiver of every channel kind and every token. A one-shot receiver
// has one value: it has no recv_many.
#if COCHAN_TEST_BOOST_ASIO
#include <cochan/boost_asio.hpp>
#else
#include <cochan/asio.hpp>
#endif

#include "support/asio_flavour.hpp"

#include "asio/matrix.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace asio_matrix;

namespace {

template <class Op, class K> void recv_many_rows() {
    for (const auto& d : drivers<Op, batch_endpoints_of<K>>()) {
        INFO(K::name << ", " << Op::name << ", " << d.name);
        const auto disconnected = error(Op::ec && d.throws, recv_errc::disconnected);
        { // values there, up to max (rendezvous: one sender waiting with its value)
            asio::io_context io;
            batch_channel<K> c;
            auto s = offer(c, 7);
            if constexpr (!K::is_rendezvous) REQUIRE(show(push(c, 8)) == sent);
            CHECK(d.run(io, c, 0, nothing) == (K::is_rendezvous ? "1 values" : "2 values"));
            CHECK(show(s) == sent);
            CHECK(c.out == (K::is_rendezvous ? std::vector<int>{7} : std::vector<int>{7, 8}));
        }
        if constexpr (!K::is_rendezvous) { // no more than max
            asio::io_context io;
            batch_channel<K> c;
            c.max = 1;
            REQUIRE(show(push(c, 7)) == sent);
            REQUIRE(show(push(c, 8)) == sent);
            CHECK(d.run(io, c, 0, nothing) == "1 values");
            CHECK(c.out == std::vector<int>{7});
            CHECK(show(c.rx.try_recv()) == value(8));
        }
        { // a value sent while it waits
            asio::io_context io;
            batch_channel<K> c;
            std::string s = "not sent";
            CHECK(d.run(io, c, 0, [&] { s = show(push(c, 9)); }) == "1 values");
            CHECK(s == sent);
            CHECK(c.out == std::vector<int>{9});
        }
        { // every sender gone
            asio::io_context io;
            batch_channel<K> c;
            drop(c.tx);
            CHECK(d.run(io, c, 0, nothing) == disconnected);
            CHECK(c.out.empty());
        }
        { // the last sender gone while it waits
            asio::io_context io;
            batch_channel<K> c;
            CHECK(d.run(io, c, 0, [&] { drop(c.tx); }) == disconnected);
            CHECK(c.out.empty());
        }
    }
}

} // namespace

TEMPLATE_LIST_TEST_CASE("asio matrix: async_recv_many and async_recv_many_ec with every token",
                        "[asio][matrix][recv_many]", channel_kinds) {
    recv_many_rows<recv_many_op, TestType>();
    recv_many_rows<recv_many_ec_op, TestType>();
}
