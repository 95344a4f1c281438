// Asio's experimental channels with C++20 coroutines (`asio::awaitable`, `co_spawn`).
//
// current: `experimental::channel` (no internal locking) on an io_context run by the benchmark
//          thread; the tasks are spawned before the timed region, which is `io_context::run()`.
// mt2/mt4: `experimental::concurrent_channel` on an io_context run by W threads for the whole
//          case; the timed region spawns the tasks and waits for them. A completed operation
//          resumes its coroutine through the io_context, on whichever of the W threads takes it.
//
// Asio has no unbounded channel: the unbounded rows use capacity 16,384 + C (room for every
// value and the end markers, so sends never wait). Asio 1.22's `close()` discards buffered
// values instead of letting receivers drain them, so "drain until disconnection" is kept with
// end markers: the last producer to finish sends one marker per consumer after its values; the
// channel is FIFO, so every value is taken before the last marker. Each consumer stops at its
// first marker.
#include "ecosystem.hpp"

#include <asio/awaitable.hpp>
#include <asio/co_spawn.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/channel.hpp>
#include <asio/experimental/concurrent_channel.hpp>
#include <asio/io_context.hpp>
#include <asio/use_awaitable.hpp>

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

namespace bench::eco {
namespace {

using signature = void(asio::error_code, std::uint64_t);
using st_channel = asio::experimental::channel<signature>;
using mt_channel = asio::experimental::concurrent_channel<signature>;

template <class Channel>
asio::awaitable<void> producer(Channel& ch, std::uint64_t first, std::uint64_t last,
                               std::atomic<unsigned>& producers_left, unsigned consumers,
                               completion& done) {
    const asio::error_code no_error;
    for (std::uint64_t i = first; i < last; ++i) {
        std::uint64_t v = i + 1;
        co_await ch.async_send(no_error, v, asio::use_awaitable);
    }
    // acq_rel: the last producer's markers follow every other producer's values.
    if (producers_left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        for (unsigned c = 0; c < consumers; ++c) {
            std::uint64_t marker = end_marker;
            co_await ch.async_send(no_error, marker, asio::use_awaitable);
        }
    }
    done.finish();
}

template <class Channel> asio::awaitable<void> consumer(Channel& ch, tally& t, completion& done) {
    for (;;) {
        auto [ec, v] = co_await ch.async_receive(asio::experimental::as_tuple(asio::use_awaitable));
        if (ec) fatal("asio: receive failed");
        if (v == end_marker) break;
        t.add(v);
    }
    done.finish();
}

template <class Channel> class asio_case {
    static constexpr bool mt = std::is_same_v<Channel, mt_channel>;

  public:
    asio_case(queue_kind q, topology t, unsigned workers)
        : topo_(t),
          capacity_(q == queue_kind::bounded ? bounded_capacity : total_values + t.consumers),
          ioc_(static_cast<int>(mt ? workers : 1)), guard_(ioc_.get_executor()) {
        if constexpr (mt) {
            for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this] { ioc_.run(); });
        } else {
            guard_.reset(); // the benchmark thread's run() returns when the tasks are done
        }
    }
    asio_case(const asio_case&) = delete;
    asio_case& operator=(const asio_case&) = delete;
    ~asio_case() {
        guard_.reset();
        for (std::thread& t : threads_) t.join();
    }

    void prepare(tallies& t) {
        ch_ = std::make_unique<Channel>(ioc_, capacity_);
        tallies_ = &t;
        producers_left_.store(topo_.producers, std::memory_order_relaxed);
        done_.reset(topo_.producers + topo_.consumers);
        if constexpr (!mt) spawn(); // nothing runs before ioc_.run()
    }

    void run() {
        if constexpr (mt) {
            spawn();
            done_.wait("asio mt");
        } else {
            ioc_.restart(); // run() returning (and dropping the guard) left it stopped
            ioc_.run();
            if (!done_.done()) fatal("asio current: run() returned with tasks still waiting");
        }
    }

  private:
    /// co_spawn's completion handler: an exception in a task is a harness bug.
    static void check(const std::exception_ptr& e) {
        if (!e) return;
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& x) {
            std::fprintf(stderr, "asio task threw: %s\n", x.what());
        }
        fatal("asio: a task threw");
    }

    void spawn() {
        for (unsigned c = 0; c < topo_.consumers; ++c)
            asio::co_spawn(ioc_, consumer(*ch_, (*tallies_)[c], done_), check);
        for (unsigned p = 0; p < topo_.producers; ++p) {
            asio::co_spawn(ioc_,
                           producer(*ch_, topo_.first(p), topo_.last(p), producers_left_,
                                    topo_.consumers, done_),
                           check);
        }
    }

    topology topo_;
    std::size_t capacity_;
    asio::io_context ioc_;
    asio::executor_work_guard<asio::io_context::executor_type> guard_;
    std::vector<std::thread> threads_;
    std::unique_ptr<Channel> ch_; // not std::optional: g++ 12 warns maybe-uninitialized in Asio
    tallies* tallies_ = nullptr;
    std::atomic<unsigned> producers_left_{0};
    completion done_;
};

} // namespace

void register_asio() {
    for (queue_kind q : queue_kinds) {
        for (const runtime& rt : coroutine_runtimes) {
            for (const topology& t : topologies()) {
                if (rt.workers == 0)
                    add<asio_case<st_channel>>(q, rt, "asio", t);
                else
                    add<asio_case<mt_channel>>(q, rt, "asio", t);
            }
        }
    }
}

} // namespace bench::eco
