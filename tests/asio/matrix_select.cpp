// The Asio adapter's combination matrix (tables and drivers: matrix.hpp): async_select and
// async_select_ec over a receiver of every channel kind (with one of another kind) and every
// token. A one-shot receiver is not a channel_receiver: compile_fail/async_select_oneshot.cpp.
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

template <class Op, class K> void select_rows() {
    for (const auto& d : drivers<Op, select_pair_of<K>>()) {
        INFO(K::name << " and " << unbounded<mpmc>::name << ", " << Op::name << ", " << d.name);
        const auto disconnected = error(Op::ec && d.throws, recv_errc::disconnected);
        { // a value there in the first channel (rendezvous: a sender waiting with it)
            asio::io_context io;
            channel_pair<K> c;
            auto s = offer(c.a, 7);
            CHECK(d.run(io, c, 0, nothing) == from(0, 7));
            CHECK(show(s) == sent);
        }
        { // a value sent to the first channel while it waits (rendezvous: into the select)
            asio::io_context io;
            channel_pair<K> c;
            std::string s = "not sent";
            CHECK(d.run(io, c, 0, [&] { s = show(push(c.a, 8)); }) == from(0, 8));
            CHECK(s == sent);
        }
        { // the first channel ended, a value sent to the second while it waits
            asio::io_context io;
            channel_pair<K> c;
            drop(c.a.tx);
            std::string s = "not sent";
            CHECK(d.run(io, c, 0, [&] { s = show(push(c.b, 9)); }) == from(1, 9));
            CHECK(s == sent);
        }
        { // every channel ended
            asio::io_context io;
            channel_pair<K> c;
            drop(c.a.tx);
            drop(c.b.tx);
            CHECK(d.run(io, c, 0, nothing) == disconnected);
        }
        { // the last channel ended while it waits
            asio::io_context io;
            channel_pair<K> c;
            drop(c.b.tx);
            CHECK(d.run(io, c, 0, [&] { drop(c.a.tx); }) == disconnected);
        }
    }
}

} // namespace

TEMPLATE_LIST_TEST_CASE("asio matrix: async_select and async_select_ec with every token",
                        "[asio][matrix][select]", channel_kinds) {
    select_rows<select_op, TestType>();
    select_rows<select_ec_op, TestType>();
}
