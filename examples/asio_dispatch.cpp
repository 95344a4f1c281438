// asio_dispatch: an Asio TCP server whose acceptor hands each accepted connection to one of W
// worker coroutines through a bounded SPMC channel, its dispatch queue: each connection reaches
// one worker, and when all are busy and the queue is full the acceptor waits (backpressure). C
// clients each send R lines on a connection of their own, check every echo and report through a
// second channel; then main closes the acceptor, its coroutine closes the sender, and the workers
// drain the queue and exit on `disconnected`.   usage: asio_dispatch [C=16] [R=50] [W=4]
// Built twice: with standalone Asio (libasio-dev) through cochan/asio.hpp, and, as
// asio_dispatch_boost with COCHAN_EXAMPLE_BOOST_ASIO defined, with Boost.Asio (libboost1.81-dev)
// through cochan/boost_asio.hpp. The code is the same: `asio` names the Asio library and
// `cochan_asio` the adapter.
#if COCHAN_EXAMPLE_BOOST_ASIO
#include <cochan/boost_asio.hpp>

#include <boost/asio.hpp>

namespace asio = boost::asio;
namespace cochan_asio = cochan::boost_asio;
#else
#include <cochan/asio.hpp>

#include <asio.hpp>

namespace cochan_asio = cochan::asio;
#endif

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using asio::ip::tcp;
using error_code = cochan_asio::error_code; // std::error_code, or boost::system::error_code
using count = unsigned long long;
constexpr auto use_awaitable = asio::use_awaitable;
constexpr std::size_t queue_capacity = 2; // connections accepted but not yet taken by a worker

// Token for I/O whose errors are expected (end-of-file, a closed acceptor): they land in `ec`.
const auto no_throw = [](error_code& ec) { return asio::redirect_error(use_awaitable, ec); };

// Counters, each written by one coroutine only and read by main after the io_context stopped.
struct acceptor_tally {
    count accepted = 0, found_full = 0; // found_full: every worker busy and the queue full
};
struct alignas(64) worker_tally {
    count connections = 0, requests = 0;
};

// Serves one connection: echoes each line until end-of-file; `s` closes when it is destroyed.
asio::awaitable<void> serve(tcp::socket s, worker_tally& mine) {
    std::string in;
    for (error_code ec;; ++mine.requests) {
        const std::size_t n =
            co_await asio::async_read_until(s, asio::dynamic_buffer(in, 4096), '\n', no_throw(ec));
        if (ec) co_return; // end-of-file: the client is done
        co_await asio::async_write(s, asio::buffer(in.data(), n), no_throw(ec));
        in.erase(0, n);
    }
}

// [readme-begin]
// The acceptor: accept a connection, hand it to the workers, repeat until the acceptor is
// closed. async_send waits while the queue is full (every worker busy and `queue_capacity`
// connections waiting), so the server stops accepting; the kernel's listen backlog holds the rest.
asio::awaitable<void> acceptor_loop(tcp::acceptor& acceptor,
                                    cochan::spmc::bounded_sender<tcp::socket> tx,
                                    acceptor_tally& stats) {
    for (;;) {
        error_code ec;
        tcp::socket socket = co_await acceptor.async_accept(no_throw(ec));
        if (ec) break; // operation_aborted: the supervisor closed the acceptor
        ++stats.accepted;
        if (tx.size() == tx.capacity()) ++stats.found_full; // a snapshot, for the printout
        auto sent = co_await cochan_asio::async_send(tx, std::move(socket), use_awaitable);
        if (!sent) break; // every worker is gone; sent.error().value is the socket, handed back
    }
    tx.close(); // the workers drain what is queued, then async_recv reports `disconnected`
}

// A worker: take the next connection, serve it to the end, repeat. Each connection is received
// by exactly one worker; the loop ends once the acceptor closed its sender and the queue is empty.
asio::awaitable<void> worker(cochan::spmc::bounded_receiver<tcp::socket> rx, worker_tally& mine) {
    while (auto socket = co_await cochan_asio::async_recv(rx, use_awaitable)) {
        ++mine.connections;
        co_await serve(std::move(*socket), mine);
    }
}
// [readme-end]

// A client: R lines on one connection, every echo checked. It reports its correct echoes through
// an unbounded MPMC channel, whose send never waits; dropping `reports` says "done".
asio::awaitable<void> client(unsigned id, tcp::endpoint server, unsigned requests,
                             cochan::mpmc::unbounded_sender<count> reports) {
    count good = 0;
    error_code ec;
    tcp::socket s(co_await asio::this_coro::executor);
    co_await s.async_connect(server, no_throw(ec));
    for (unsigned r = 0; r < requests && !ec; ++r) {
        const std::string request = std::to_string(id) + ":" + std::to_string(r) + "\n";
        std::string echo;
        co_await asio::async_write(s, asio::buffer(request), no_throw(ec));
        if (!ec) co_await asio::async_read_until(s, asio::dynamic_buffer(echo), '\n', no_throw(ec));
        good += !ec && echo == request ? 1 : 0;
    }
    (void)reports.send(good); // never waits (unbounded); fails only if main were gone
} // the socket closes: its worker sees end-of-file and takes the next connection

} // namespace

int main(int argc, char** argv) {
    const auto arg = [&](int i, unsigned fallback) {
        const unsigned long v = argc > i ? std::strtoul(argv[i], nullptr, 10) : fallback;
        return v > 0 && v <= 1000 ? static_cast<unsigned>(v) : fallback;
    };
    const unsigned clients = arg(1, 16), requests = arg(2, 50), workers = arg(3, 4);
    asio::io_context io;
    // Each coroutine gets a strand: on a multi-threaded io_context, async_recv's lossless
    // cancellation needs one. The acceptor's strand also orders closing it after its accept.
    auto control = asio::make_strand(io);
    tcp::acceptor acceptor(control, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    // co_spawn's completion: an exception escaping a coroutine leaves io.run(), not swallowed.
    const auto rethrow = [](const std::exception_ptr& e) {
        if (e) std::rethrow_exception(e);
    };
    acceptor_tally accepted;
    std::vector<worker_tally> served(workers);
    auto reports = cochan::mpmc::unbounded<count>();
    {
        auto dispatch = cochan::spmc::bounded<tcp::socket>(queue_capacity);
        for (unsigned w = 0; w < workers; ++w)
            asio::co_spawn(asio::make_strand(io), worker(dispatch.second, served[w]), rethrow);
        asio::co_spawn(control, acceptor_loop(acceptor, std::move(dispatch.first), accepted),
                       rethrow);
        for (unsigned c = 0; c < clients; ++c)
            asio::co_spawn(asio::make_strand(io),
                           client(c, acceptor.local_endpoint(), requests, reports.first), rethrow);
    } // main's own dispatch endpoints go: the coroutines hold theirs, so closing works as described
    reports.first.close(); // main sends no reports; the clients hold the other clones
    std::thread threads[] = {std::thread([&io] { io.run(); }), std::thread([&io] { io.run(); })};

    // Main is the supervisor: blocking_recv until every client dropped its sender (`disconnected`),
    // then it shuts the server down: the pending accept completes with operation_aborted.
    count good = 0, clients_done = 0;
    for (; auto report = reports.second.blocking_recv(); ++clients_done) good += *report;
    asio::post(control, [&acceptor] { acceptor.close(); });
    for (std::thread& t : threads) t.join(); // io.run() returns once every coroutine finished

    count connections = 0;
    for (unsigned w = 0; w < workers; ++w) {
        std::printf("worker %u: %llu connections\n", w, served[w].connections);
        connections += served[w].connections;
    }
    const count expected = count{clients} * requests;
    const bool ok = accepted.accepted == clients && connections == clients && good == expected;
    std::printf("acceptor: %llu connections; found the queue full %llu times (backpressure)\n"
                "clients: %llu done, %llu of %llu replies correct\ncheck: %s\n",
                accepted.accepted, accepted.found_full, clients_done, good, expected,
                ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
