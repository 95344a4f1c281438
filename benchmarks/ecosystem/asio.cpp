// Asio's experimental channels with C++20 coroutines (`asio::awaitable`, `co_spawn`), and
// cochan's channels driven the same way through its Asio adapter.
//
// One source, two Asio flavours: compiled as is, against standalone Asio 1.22 (`asio` rows,
// `cochan_asio` through `cochan::asio`), and by boost_asio.cpp with COCHAN_BENCH_BOOST_ASIO=1,
// against Boost.Asio 1.81 (`boost_asio` rows, `cochan_boost_asio` through
// `cochan::boost_asio`). Inside, the library is spelled `net::`.
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
//
// The adapter rows (1 producer only) run the same tasks on the same io_context over a cochan
// SPMC channel (bounded(64), or unbounded), with `async_send` / `async_recv` and
// `use_awaitable`, as an Asio user writes them: the producer drops its sender after its values
// and each consumer receives until `disconnected` (cochan drains before that, so no markers).
#include "ecosystem.hpp"

#if COCHAN_BENCH_BOOST_ASIO
#include <cochan/boost_asio.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/experimental/channel.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#define COCHAN_BENCH_ASIO_FLAVOUR boost_asio
#else
#include <cochan/asio.hpp>

#include <asio/awaitable.hpp>
#include <asio/co_spawn.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/channel.hpp>
#include <asio/experimental/concurrent_channel.hpp>
#include <asio/io_context.hpp>
#include <asio/use_awaitable.hpp>
#define COCHAN_BENCH_ASIO_FLAVOUR asio
#endif

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace bench::eco {
namespace COCHAN_BENCH_ASIO_FLAVOUR {
namespace {

#if COCHAN_BENCH_BOOST_ASIO
namespace net = ::boost::asio;
using error_code = ::boost::system::error_code;
using net::as_tuple;
constexpr const char* channel_name = "boost_asio";
constexpr const char* adapter_name = "cochan_boost_asio";
constexpr bool boost_flavour = true;
namespace adapter = ::cochan::boost_asio;
#else
namespace net = ::asio;
using error_code = ::asio::error_code;
using net::experimental::as_tuple;
constexpr const char* channel_name = "asio";
constexpr const char* adapter_name = "cochan_asio";
constexpr bool boost_flavour = false;
namespace adapter = ::cochan::asio;
#endif

using signature = void(error_code, std::uint64_t);
using st_channel = net::experimental::channel<signature>;
using mt_channel = net::experimental::concurrent_channel<signature>;

template <class Channel>
net::awaitable<void> producer(Channel& ch, std::uint64_t first, std::uint64_t last,
                              std::atomic<unsigned>& producers_left, unsigned consumers,
                              completion& done) {
    const error_code no_error;
    for (std::uint64_t i = first; i < last; ++i) {
        std::uint64_t v = i + 1;
        co_await ch.async_send(no_error, v, net::use_awaitable);
    }
    // acq_rel: the last producer's markers follow every other producer's values.
    if (producers_left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        for (unsigned c = 0; c < consumers; ++c) {
            std::uint64_t marker = end_marker;
            co_await ch.async_send(no_error, marker, net::use_awaitable);
        }
    }
    done.finish();
}

template <class Channel> net::awaitable<void> consumer(Channel& ch, tally& t, completion& done) {
    for (;;) {
        auto [ec, v] = co_await ch.async_receive(as_tuple(net::use_awaitable));
        if (ec) fatal("asio: receive failed");
        if (v == end_marker) break;
        t.add(v);
    }
    done.finish();
}

/// The Asio channel's tasks: `Channel` is `st_channel` on the `current` rows, `mt_channel` on
/// the mt rows.
template <class Channel> class channel_tasks {
  public:
    void prepare(net::io_context& ioc, queue_kind q, topology t) {
        ch_ = std::make_unique<Channel>(ioc, q == queue_kind::bounded ? bounded_capacity
                                                                      : total_values + t.consumers);
        producers_left_.store(t.producers, std::memory_order_relaxed);
    }

    template <class Check>
    void spawn(net::io_context& ioc, topology t, tallies& tl, completion& done, Check check) {
        for (unsigned c = 0; c < t.consumers; ++c)
            net::co_spawn(ioc, consumer(*ch_, tl[c], done), check);
        for (unsigned p = 0; p < t.producers; ++p) {
            net::co_spawn(ioc,
                          producer(*ch_, t.first(p), t.last(p), producers_left_, t.consumers, done),
                          check);
        }
    }

  private:
    std::unique_ptr<Channel> ch_; // not std::optional: g++ 12 warns maybe-uninitialized in Asio
    std::atomic<unsigned> producers_left_{0};
};

template <class Tx>
net::awaitable<void> adapter_producer(Tx tx, std::uint64_t first, std::uint64_t last,
                                      completion& done) {
    {
        Tx mine = std::move(tx); // dropped inside the task: disconnection is timed
        for (std::uint64_t i = first; i < last; ++i) {
            auto r = co_await adapter::async_send(mine, i + 1, net::use_awaitable);
            if (!r) fatal("cochan through the Asio adapter: send failed");
        }
    }
    done.finish();
}

template <class Rx> net::awaitable<void> adapter_consumer(Rx rx, tally& t, completion& done) {
    for (;;) {
        auto r = co_await adapter::async_recv(rx, net::use_awaitable);
        if (!r) break; // disconnected and drained
        t.add(*r);
    }
    done.finish();
}

/// cochan's SPMC channel through the adapter, one producer.
template <queue_kind Q> class adapter_tasks {
    using channel_pair =
        std::conditional_t<Q == queue_kind::bounded,
                           decltype(cochan::spmc::bounded<std::uint64_t>(bounded_capacity)),
                           decltype(cochan::spmc::unbounded<std::uint64_t>())>;

  public:
    void prepare(net::io_context&, queue_kind, topology) {
        if constexpr (Q == queue_kind::bounded) {
            ch_.emplace(cochan::spmc::bounded<std::uint64_t>(bounded_capacity));
        } else {
            ch_.emplace(cochan::spmc::unbounded<std::uint64_t>());
        }
    }

    template <class Check>
    void spawn(net::io_context& ioc, topology t, tallies& tl, completion& done, Check check) {
        for (unsigned c = 0; c < t.consumers; ++c)
            net::co_spawn(ioc, adapter_consumer(ch_->second, tl[c], done), check);
        net::co_spawn(ioc, adapter_producer(std::move(ch_->first), t.first(0), t.last(0), done),
                      check);
        ch_.reset(); // the tasks hold the only endpoints
    }

  private:
    std::optional<channel_pair> ch_;
};

/// One case on an io_context: run by the benchmark thread (`current`, workers 0: the timed
/// region is `run()`) or by W threads for the whole case (the timed region spawns the tasks and
/// waits for them).
template <class Tasks> class asio_case {
  public:
    asio_case(queue_kind q, topology t, unsigned workers)
        : queue_(q), topo_(t), mt_(workers != 0),
          ioc_(static_cast<int>(workers != 0 ? workers : 1)), guard_(ioc_.get_executor()) {
        if (mt_) {
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
        tasks_.prepare(ioc_, queue_, topo_);
        tallies_ = &t;
        done_.reset(topo_.producers + topo_.consumers);
        if (!mt_) spawn(); // nothing runs before ioc_.run()
    }

    void run() {
        if (mt_) {
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

    void spawn() { tasks_.spawn(ioc_, topo_, *tallies_, done_, &check); }

    queue_kind queue_;
    topology topo_;
    bool mt_;
    net::io_context ioc_;
    net::executor_work_guard<net::io_context::executor_type> guard_;
    std::vector<std::thread> threads_;
    Tasks tasks_;
    tallies* tallies_ = nullptr;
    completion done_;
};

} // namespace

/// Registers the Asio channel's rows (the standalone ones on every topology, Boost.Asio's on
/// the 1-producer ones) and the adapter's (1-producer).
void register_cases() {
    for (queue_kind q : queue_kinds) {
        for (const runtime& rt : coroutine_runtimes) {
            for (const topology& t : topologies()) {
                if (t.producers != 1 && boost_flavour) continue;
                if (rt.workers == 0)
                    add<asio_case<channel_tasks<st_channel>>>(q, rt, channel_name, t);
                else
                    add<asio_case<channel_tasks<mt_channel>>>(q, rt, channel_name, t);
            }
            for (const topology& t : topologies()) {
                if (t.producers != 1) continue;
                if (q == queue_kind::bounded)
                    add<asio_case<adapter_tasks<queue_kind::bounded>>>(q, rt, adapter_name, t);
                else
                    add<asio_case<adapter_tasks<queue_kind::unbounded>>>(q, rt, adapter_name, t);
            }
        }
    }
}

} // namespace COCHAN_BENCH_ASIO_FLAVOUR

#if COCHAN_BENCH_BOOST_ASIO
void register_boost_asio() {
    boost_asio::register_cases();
}
#else
void register_asio() {
    asio::register_cases();
}
#endif

} // namespace bench::eco
