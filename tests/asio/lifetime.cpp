// The Asio adapter and the lifetime of the execution context: an io_context destroyed while
// operations wait, are queued or are being completed on another thread; lazy tokens outliving
// every endpoint; the allocator of the intermediate post. Run under ASan with
// detect_leaks=1: a leak fails the run even where no assertion can see it.
#if COCHAN_TEST_BOOST_ASIO
#include <cochan/boost_asio.hpp>
#else
#include <cochan/asio.hpp>
#endif

#include "support/asio_flavour.hpp"

#include "support/counted.hpp"
#include "support/counting_allocator.hpp"
#include "support/task.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <coroutine>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

using adapter::async_recv;
using adapter::async_send;
using cochan_test::counted;
using cochan_test::counted_handler;
using cochan_test::handler_counts;

TEST_CASE("bug: a completion queued when its io_context was destroyed leaked the operation and "
          "its handler and lost the value and its slot",
          "[asio][lifetime][exactly-once]") {
    counted::reset();
    handler_counts probes;
    {
        auto [tx, rx] = cochan::mpmc::bounded<counted>(1);
        SECTION("a receive granted while it waited") {
            {
                asio::io_context io;
                async_recv(rx, asio::bind_executor(io, counted_handler(&probes)));
                REQUIRE(tx.try_send(counted(7))); // granted: the completion is queued, never run
            }
            CHECK(probes.alive == 0); // the handler was destroyed, as Asio destroys handlers
            CHECK(probes.invoked == 0);
            auto r = rx.try_recv(); // the value came back, and with it the slot
            REQUIRE(r);
            CHECK(r->value == 7);
            CHECK(tx.try_send(counted(8)));
        }
        SECTION("a receive that took a buffered value at once (its slot reserved)") {
            REQUIRE(tx.try_send(counted(7)));
            {
                asio::io_context io;
                async_recv(rx, asio::bind_executor(io, counted_handler(&probes)));
            }
            CHECK(probes.alive == 0);
            CHECK(probes.invoked == 0);
            auto r = rx.try_recv();
            REQUIRE(r);
            CHECK(r->value == 7);
            CHECK(tx.try_send(counted(8)));
        }
        SECTION("a send that completed at once") {
            {
                asio::io_context io;
                async_send(tx, counted(7), asio::bind_executor(io, counted_handler(&probes)));
            }
            CHECK(probes.alive == 0);
            CHECK(probes.invoked == 0);
            auto r = rx.try_recv(); // it was sent: the value is in the channel
            REQUIRE(r);
            CHECK(r->value == 7);
        }
    }
    CHECK(counted::live() == 0);
}

TEST_CASE("bug: an io_context destroyed while an operation waited let a later grant post into "
          "the dead io_context",
          "[asio][lifetime]") {
    counted::reset();
    handler_counts probes;
    {
        SECTION("a waiting receive") {
            auto [tx, rx] = cochan::spmc::bounded<counted>(1);
            {
                asio::io_context io;
                async_recv(rx, asio::bind_executor(io, counted_handler(&probes)));
            } // the operation is unlinked from the channel and its handler destroyed
            CHECK(probes.alive == 0);
            REQUIRE(tx.try_send(counted(1))); // buffered: nobody waits any more
            auto r = rx.try_recv();
            REQUIRE(r);
            CHECK(r->value == 1);
        }
        SECTION("a waiting send on an SPMC sender") {
            auto [tx, rx] = cochan::spmc::bounded<counted>(1);
            REQUIRE(tx.try_send(counted(1)));
            {
                asio::io_context io;
                async_send(tx, counted(2), asio::bind_executor(io, counted_handler(&probes)));
            } // unlinked; its value is destroyed with it; the sender is free again
            CHECK(probes.alive == 0);
            CHECK(counted::live() == 1);
            auto r = rx.try_recv(); // frees the slot: no abandoned send is admitted into it
            REQUIRE(r);
            CHECK(r->value == 1);
            CHECK(rx.empty());
            CHECK(tx.try_send(counted(3))); // not "two sends overlap on one SPMC sender"
        }
    }
    CHECK(probes.invoked == 0);
    CHECK(counted::live() == 0);
}

// Race (1) on one thread: one transition (the last sender dropped) completes two waiters, a
// coroutine with a resume_on poster and then an Asio operation. The poster runs inside the
// batch's notifications, before the operation's own, and destroys the io_context: the
// operation is done but not yet notified when the io_context shuts down. The shutdown destroys
// its handler; the late notification frees it and must not post.
TEST_CASE("bug: an operation completed but not yet notified when its io_context was destroyed "
          "posted into the dead io_context",
          "[asio][lifetime]") {
    handler_counts probes;
    auto channel = cochan::spmc::unbounded<int>();
    std::optional<asio::io_context> io(std::in_place);
    std::coroutine_handle<> parked;
    auto destroy_io_then_park = [&io, &parked](std::coroutine_handle<> h) {
        io.reset();
        parked = h; // resumed below, after the batch (a poster must not resume inline)
    };
    auto waiter = [](cochan::spmc::unbounded_receiver<int>& rx,
                     decltype(destroy_io_then_park) post) -> cochan_test::task<bool> {
        auto r = co_await rx.recv().resume_on(post);
        co_return r.has_value();
    }(channel.second, destroy_io_then_park);
    async_recv(channel.second, asio::bind_executor(*io, counted_handler(&probes))); // linked second
    { auto drop = std::move(channel.first); } // both complete `disconnected`, in link order
    CHECK_FALSE(io.has_value());
    CHECK(probes.alive == 0); // destroyed by the shutdown, never invoked
    CHECK(probes.invoked == 0);
    REQUIRE(parked);
    parked.resume();
    REQUIRE(waiter.done());
    CHECK_FALSE(waiter.result());
}

// The same race with threads: a thread grants values to waiting operations and then
// disconnects them while the main thread destroys their io_context. Nothing runs the
// io_context, so every value sent must end up back in the channel.
TEST_CASE("bug: an io_context destroyed while another thread completes its operations lost "
          "values or used the dead io_context",
          "[asio][lifetime][exactly-once][thread-safety]") {
    constexpr int rounds = 200;
    constexpr int waiting = 8;
    for (int round = 0; round < rounds; ++round) {
        handler_counts probes;
        auto channel = cochan::mpmc::bounded<int>(4);
        auto& rx = channel.second;
        std::optional<asio::io_context> io(std::in_place);
        for (int i = 0; i < waiting; ++i)
            async_recv(rx, asio::bind_executor(*io, counted_handler(&probes)));
        std::atomic<int> ready{0};
        int sent = 0;
        std::thread completer([&, tx = std::move(channel.first)]() mutable {
            ready.fetch_add(1);
            while (ready.load() < 2) {
            } // spin: start together with the main thread
            for (int i = 0; i < waiting - 2; ++i) sent += tx.try_send(i) ? 1 : 0;
            auto drop = std::move(tx); // the last sender: every operation still waiting completes
        });
        ready.fetch_add(1);
        while (ready.load() < 2) {
        }
        io.reset();
        completer.join();
        int drained = 0;
        while (rx.try_recv()) ++drained;
        REQUIRE(drained == sent);
        REQUIRE(rx.try_recv().error() == cochan::recv_errc::disconnected);
        REQUIRE(probes.alive == 0);
        REQUIRE(probes.invoked == 0);
    }
}

namespace {

/// A handler whose destruction starts a new receive on the same executor, as a coroutine frame
/// destroyed at shutdown may.
struct restarter {
    restarter(cochan::mpmc::bounded_receiver<int>* r, asio::io_context::executor_type e,
              handler_counts* c, bool* s) noexcept
        : rx(r), ex(std::move(e)), counts(c), started(s) {}
    restarter(restarter&& other) noexcept
        : rx(other.rx), ex(std::move(other.ex)), counts(other.counts),
          started(std::exchange(other.started, nullptr)) {}
    restarter(const restarter&) = delete;
    restarter& operator=(const restarter&) = delete;
    restarter& operator=(restarter&&) = delete;
    ~restarter() {
        if (started == nullptr) return;
        *started = true;
        async_recv(*rx, asio::bind_executor(ex, counted_handler(counts)));
    }
    void operator()(const cochan::recv_result<int>&) { ++counts->invoked; }

    using executor_type = asio::io_context::executor_type; // the handler's associated executor
    executor_type get_executor() const noexcept { return ex; }

    cochan::mpmc::bounded_receiver<int>* rx;
    asio::io_context::executor_type ex;
    handler_counts* counts;
    bool* started; // owned by the live (not moved-from) handler
};

} // namespace

TEST_CASE("bug: an operation started by a handler destroyed at io_context shutdown was never "
          "freed",
          "[asio][lifetime]") {
    handler_counts probes;
    auto [tx, rx] = cochan::mpmc::bounded<int>(1);
    bool started = false;
    {
        asio::io_context io;
        async_recv(rx, restarter(&rx, io.get_executor(), &probes, &started));
    }
    CHECK(started);           // the first handler was destroyed, and started a receive then
    CHECK(probes.alive == 0); // which was abandoned at once: the io_context was shutting down
    CHECK(probes.invoked == 0);
    REQUIRE(tx.try_send(1)); // and never linked: nothing takes this value
    auto r = rx.try_recv();
    REQUIRE(r);
    CHECK(*r == 1);
}

TEST_CASE("bug: coroutines suspended in async_recv and async_send leaked their frames when the "
          "io_context was stopped and destroyed",
          "[asio][lifetime][exactly-once]") {
    counted::reset();
    auto granted = cochan::mpmc::bounded<counted>(1); // its value is granted, never delivered
    auto full = cochan::mpmc::bounded<counted>(1);    // a send waits on it
    auto empty = cochan::mpmc::bounded<counted>(1);   // a receive waits on it
    REQUIRE(full.first.try_send(counted(20)));
    std::atomic<int> resumed{0};
    {
        asio::io_context io;
        auto receiver = [&resumed](cochan::mpmc::bounded_receiver<counted> rx,
                                   int tag) -> asio::awaitable<void> {
            counted guard(tag); // lives in the frame
            auto r = co_await async_recv(rx, asio::use_awaitable);
            ++resumed; // never: the io_context does not run again
        };
        auto sender =
            [&resumed](cochan::mpmc::bounded_sender<counted> tx) -> asio::awaitable<void> {
            counted guard(2);
            counted value(21);
            auto r = co_await async_send(tx, std::move(value), asio::use_awaitable);
            ++resumed;
        };
        asio::co_spawn(io, receiver(granted.second, 1), asio::detached);
        asio::co_spawn(io, receiver(empty.second, 3), asio::detached);
        asio::co_spawn(io, sender(full.first), asio::detached);
        io.poll();                                    // every coroutine runs to its wait
        REQUIRE(granted.first.try_send(counted(10))); // granted; its completion stays queued
        io.stop();
    }
    CHECK(resumed == 0); // nothing ran twice, nothing ran after the io_context stopped
    // Alive now: 10, handed back to `granted`, and 20 in `full`. The guards, 21 (never sent)
    // and the frames' endpoint clones are gone.
    CHECK(counted::live() == 2);
    auto a = granted.second.try_recv();
    REQUIRE(a);
    CHECK(a->value == 10);
    auto b = full.second.try_recv();
    REQUIRE(b);
    CHECK(b->value == 20);
    CHECK(full.second.try_recv().error() == cochan::recv_errc::empty); // 21 was not sent
}

namespace {
// Awaits `op` (created earlier, outside any coroutine) and stores its result.
template <class R> asio::awaitable<void> await_into(asio::awaitable<R> op, std::optional<R>& out) {
    auto r = co_await std::move(op);
    out.emplace(std::move(r));
}
} // namespace

TEST_CASE("bug: lazy tokens kept a raw channel pointer so dropping every endpoint before "
          "launching was a use-after-free",
          "[asio][lifetime]") {
    asio::io_context io;
    std::optional<cochan::recv_result<int>> got;
    std::optional<cochan::send_result<int>> sent;
    SECTION("experimental::deferred") {
        auto channel = cochan::mpmc::bounded<int>(1);
        auto recv = async_recv(channel.second, cochan_test::deferred);
        auto send = async_send(channel.first, 5, cochan_test::deferred);
        { auto drop = std::move(channel); } // every endpoint is gone before either launches
        std::move(recv)(asio::bind_executor(
            io, [&](cochan::recv_result<int> r) { got.emplace(std::move(r)); }));
        std::move(send)(asio::bind_executor(
            io, [&](cochan::send_result<int> r) { sent.emplace(std::move(r)); }));
    }
    SECTION("use_awaitable, not yet awaited") {
        auto channel = cochan::mpmc::bounded<int>(1);
        auto recv = async_recv(channel.second, asio::use_awaitable);
        auto send = async_send(channel.first, 5, asio::use_awaitable);
        { auto drop = std::move(channel); }
        asio::co_spawn(io, await_into(std::move(recv), got), asio::detached);
        asio::co_spawn(io, await_into(std::move(send), sent), asio::detached);
    }
    io.run();
    // No sender is left, and no receiver: the receive sees disconnected, the send gets its
    // value back with disconnected.
    REQUIRE(got);
    CHECK(got->error() == cochan::recv_errc::disconnected);
    REQUIRE(sent);
    REQUIRE_FALSE(*sent);
    CHECK(sent->error().reason == cochan::send_errc::disconnected);
    CHECK(sent->error().value == 5);
}

TEST_CASE("bug: the intermediate post used the default allocator instead of the handler's",
          "[asio][lifetime]") {
    asio::io_context io;
    auto [tx, rx] = cochan::spmc::bounded<int>(1);
    using allocator = cochan_test::counting_allocator<int, struct intermediate_post_tag>;
    allocator::counts::reset();
    bool done = false;
    async_recv(rx, asio::bind_allocator(
                       allocator(), asio::bind_executor(io, [&](const cochan::recv_result<int>& r) {
                           done = r.has_value();
                       })));
    CHECK(allocator::counts::allocations == 1); // the operation
    REQUIRE(tx.try_send(1));
    // And the executor's operation holding the posted completion.
    CHECK(allocator::counts::allocations == 2);
    io.run();
    CHECK(done);
    CHECK(allocator::counts::deallocations == 2);
}
