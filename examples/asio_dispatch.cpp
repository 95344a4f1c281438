// asio_dispatch: an Asio TCP server whose acceptor hands every accepted connection to one of W
// worker coroutines through a bounded SPMC channel. The channel is the server's dispatch
// queue: each connection reaches exactly one worker, and when every worker is busy and the
// queue is full, the acceptor waits instead of piling connections up (backpressure).
//
// A client in the same program opens C connections to 127.0.0.1, sends R "hash <text>" lines
// on each and checks every reply against a hash computed locally. When every client is done,
// the server shuts down gracefully: the acceptor is closed, the acceptor coroutine closes its
// sender, and the workers drain the queue and exit on `disconnected`. Every coroutine is an
// asio::awaitable started with co_spawn; the io_context runs on two threads.
//
//   usage: asio_dispatch [clients=16] [requests=50] [workers=4]
//
// Needs standalone Asio (Debian: libasio-dev). `asio::awaitable` cannot await cochan's own
// awaitables, so channel operations go through cochan/asio.hpp's async_send / async_recv.
#include <cochan/asio.hpp>

#include <asio/buffer.hpp>
#include <asio/co_spawn.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/address.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read_until.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace {

using asio::ip::tcp;
constexpr auto use_awaitable = asio::use_awaitable;
constexpr std::size_t queue_capacity = 2; // connections accepted but not yet taken by a worker
constexpr std::size_t max_line = 4096;    // longest request or reply line, newline included

// Completion token for I/O whose errors are expected (end-of-file, a closed acceptor): the
// error lands in `ec` instead of being thrown out of the co_await.
auto no_throw(asio::error_code& ec) {
    return asio::redirect_error(use_awaitable, ec);
}

// The "work": FNV-1a, 64-bit, sent back as 16 hex digits.
std::uint64_t fnv1a(std::string_view s) {
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
}

std::string to_hex(std::uint64_t h) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
    return text;
}

// Counters, each written by one coroutine only and read by main after the io_context stopped.
using count = unsigned long long;
struct acceptor_tally {
    count accepted = 0, found_full = 0; // found_full: every worker busy and the queue full
};
struct alignas(64) worker_tally {
    count connections = 0, requests = 0, errors = 0;
    std::uint64_t digest = 0; // xor of the hashes served: compared with the clients' digest
};
// What a client sends back to the supervisor (through a second channel) when it is done.
struct client_report {
    count good = 0, bad = 0, failed = 0; // replies right, replies wrong, broken connections
    std::uint64_t digest = 0;            // xor of the hashes checked
};

// Serves one connection: each line "hash <text>" is answered with the hash of <text>. Returns
// when the client closes the connection; the socket is closed when `socket` is destroyed.
asio::awaitable<void> serve(tcp::socket socket, worker_tally& mine) {
    std::string in;
    asio::error_code ec;
    while (!ec) { // one request per round, until the client's end-of-file (or an error)
        const std::size_t n = co_await asio::async_read_until(
            socket, asio::dynamic_buffer(in, max_line), '\n', no_throw(ec));
        if (ec) break;
        const std::string_view line(in.data(), n - 1);
        std::string reply = "error\n";
        if (line.starts_with("hash ")) {
            const std::uint64_t h = fnv1a(line.substr(5));
            reply = to_hex(h) + "\n";
            ++mine.requests;
            mine.digest ^= h;
        }
        in.erase(0, n);
        co_await asio::async_write(socket, asio::buffer(reply), no_throw(ec));
    }
    if (ec != asio::error::eof) ++mine.errors;
}

// [readme-begin]
// The acceptor: accept a connection, hand it to the workers, repeat until the acceptor is
// closed. async_send waits while the queue is full (every worker busy and `queue_capacity`
// connections waiting), so the server stops accepting; the kernel's listen backlog holds the rest.
asio::awaitable<void> acceptor_loop(tcp::acceptor& acceptor,
                                    cochan::spmc::bounded_sender<tcp::socket> tx,
                                    acceptor_tally& stats) {
    for (;;) {
        asio::error_code ec;
        tcp::socket socket = co_await acceptor.async_accept(no_throw(ec));
        if (ec) break; // operation_aborted: the supervisor closed the acceptor
        ++stats.accepted;
        if (tx.size() == tx.capacity()) ++stats.found_full; // a snapshot, for the printout
        auto sent = co_await cochan::asio::async_send(tx, std::move(socket), use_awaitable);
        if (!sent) break; // every worker is gone; sent.error().value is the socket, handed back
    }
    tx.close(); // the workers drain what is queued, then async_recv reports `disconnected`
}

// A worker: take the next connection, serve it to the end, repeat. Each connection is received
// by exactly one worker; the loop ends once the acceptor closed its sender and the queue is empty.
asio::awaitable<void> worker(cochan::spmc::bounded_receiver<tcp::socket> rx, worker_tally& mine) {
    while (auto socket = co_await cochan::asio::async_recv(rx, use_awaitable)) {
        ++mine.connections;
        co_await serve(std::move(*socket), mine);
    }
}
// [readme-end]

// One client connection: R requests, each reply checked, then close (the worker sees
// end-of-file and moves on). The report goes to the supervisor through an unbounded MPMC
// channel, whose send never waits; dropping `reports` at the end says "this client is done".
asio::awaitable<void> client(unsigned id, tcp::endpoint server, unsigned requests,
                             cochan::mpmc::unbounded_sender<client_report> reports) {
    client_report report;
    tcp::socket socket(co_await asio::this_coro::executor);
    asio::error_code ec;
    co_await socket.async_connect(server, no_throw(ec));
    std::string in;
    for (unsigned r = 0; r < requests && !ec; ++r) {
        const std::string text = "client " + std::to_string(id) + " request " + std::to_string(r);
        const std::string request = "hash " + text + "\n";
        co_await asio::async_write(socket, asio::buffer(request), no_throw(ec));
        if (ec) break;
        const std::size_t n = co_await asio::async_read_until(
            socket, asio::dynamic_buffer(in, max_line), '\n', no_throw(ec));
        if (ec) break;
        const std::uint64_t expected = fnv1a(text);
        const bool right = std::string_view(in.data(), n - 1) == to_hex(expected);
        report.good += right ? 1 : 0;
        report.bad += right ? 0 : 1;
        report.digest ^= right ? expected : 0;
        in.erase(0, n);
    }
    if (ec) ++report.failed;
    socket.close(ec);
    // Never waits (unbounded). It could fail only if the supervisor were gone; the final check
    // would then miss this client's report.
    (void)reports.send(report);
}

// Sums the reports until every client has dropped its sender (`disconnected`), then shuts the
// server down. It runs on the acceptor's strand, so closing the acceptor cannot race with the
// accept the acceptor coroutine has pending.
asio::awaitable<void> supervisor(cochan::mpmc::unbounded_receiver<client_report> reports,
                                 tcp::acceptor& acceptor, asio::steady_timer& watchdog,
                                 client_report& total, count& clients_done) {
    while (auto report = co_await cochan::asio::async_recv(reports, use_awaitable)) {
        ++clients_done;
        total.good += report->good;
        total.bad += report->bad;
        total.failed += report->failed;
        total.digest ^= report->digest;
    }
    asio::error_code ignored;
    acceptor.close(ignored); // the pending accept completes with operation_aborted
    watchdog.cancel();
}

unsigned arg_or(int argc, char** argv, int i, unsigned fallback) {
    const unsigned long v = argc > i ? std::strtoul(argv[i], nullptr, 10) : fallback;
    return v > 0 && v <= 1000 ? static_cast<unsigned>(v) : fallback;
}

} // namespace

int main(int argc, char** argv) {
    const unsigned clients = arg_or(argc, argv, 1, 16);
    const unsigned requests = arg_or(argc, argv, 2, 50);
    const unsigned workers = arg_or(argc, argv, 3, 4);

    asio::io_context io;
    // The acceptor, the supervisor and the watchdog share a strand: all three touch the
    // acceptor or each other. Every other coroutine gets a strand of its own. A coroutine runs
    // one step at a time anyway, but on a multi-threaded io_context async_recv's lossless
    // cancellation (e.g. `async_recv(...) || timer`) needs the coroutine on a strand.
    auto control = asio::make_strand(io);
    tcp::acceptor acceptor(control, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    const tcp::endpoint server = acceptor.local_endpoint();
    std::printf("listening on 127.0.0.1:%u\n", static_cast<unsigned>(server.port()));

    // A hang must fail the run, not stall it: exit at once rather than unwind half-done work.
    asio::steady_timer watchdog(control, std::chrono::seconds(5));
    watchdog.async_wait([](asio::error_code ec) {
        if (ec) return; // cancelled: the supervisor finished in time
        std::fputs("asio_dispatch: timed out\n", stderr);
        std::_Exit(1);
    });

    // co_spawn's completion: an exception escaping a coroutine propagates out of io.run()
    // (asio::detached would swallow it).
    const auto rethrow = [](const std::exception_ptr& e) {
        if (e) std::rethrow_exception(e);
    };
    acceptor_tally accepted;
    std::vector<worker_tally> served(workers);
    client_report total;
    count clients_done = 0;
    {
        auto dispatch = cochan::spmc::bounded<tcp::socket>(queue_capacity);
        for (unsigned w = 0; w < workers; ++w)
            asio::co_spawn(asio::make_strand(io), worker(dispatch.second, served[w]), rethrow);
        asio::co_spawn(control, acceptor_loop(acceptor, std::move(dispatch.first), accepted),
                       rethrow);

        auto reports = cochan::mpmc::unbounded<client_report>();
        asio::co_spawn(
            control, supervisor(std::move(reports.second), acceptor, watchdog, total, clients_done),
            rethrow);
        for (unsigned c = 0; c < clients; ++c)
            asio::co_spawn(asio::make_strand(io), client(c, server, requests, reports.first),
                           rethrow);
    } // main's own endpoints go: the coroutines hold theirs, so closing works as described

    const auto start = std::chrono::steady_clock::now();
    std::thread second_thread([&io] { io.run(); });
    io.run(); // returns when every coroutine has finished
    second_thread.join();
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;

    worker_tally sum;
    for (unsigned w = 0; w < workers; ++w) {
        std::printf("worker %u: %llu connections, %llu requests\n", w, served[w].connections,
                    served[w].requests);
        sum.connections += served[w].connections;
        sum.requests += served[w].requests;
        sum.errors += served[w].errors;
        sum.digest ^= served[w].digest;
    }
    std::printf("acceptor: %llu connections; found the queue full %llu times (backpressure)\n",
                accepted.accepted, accepted.found_full);
    std::printf("clients: %llu done, %llu replies correct, %llu wrong, %llu failed connections\n",
                clients_done, total.good, total.bad, total.failed);
    std::printf("total: %llu requests on %u workers, 2 threads, in %.3f s\n", sum.requests, workers,
                elapsed.count());

    const count expected = count{clients} * requests;
    const bool ok = clients_done == clients && accepted.accepted == clients &&
                    sum.connections == clients && total.good == expected && total.bad == 0 &&
                    total.failed == 0 && sum.requests == expected && sum.errors == 0 &&
                    sum.digest == total.digest;
    std::printf("check: %s\n",
                ok ? "ok (every reply correct, every connection served once)" : "FAILED");
    return ok ? 0 : 1;
}
