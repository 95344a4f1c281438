// Boost.Fiber's building blocks for the benchmarks (ecosystem/boost_fiber.cpp, workdist/): the
// channel, its producer and consumer, a pool of threads sharing a scheduling algorithm, and a
// gate that holds fibers until the timed region starts.
#pragma once

#include "harness.hpp"

#include <boost/fiber/algo/shared_work.hpp>
#include <boost/fiber/buffered_channel.hpp>
#include <boost/fiber/condition_variable.hpp>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/mutex.hpp>
#include <boost/fiber/operations.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace bench::fibers {

using channel = boost::fibers::buffered_channel<std::uint64_t>;
using boost::fibers::channel_op_status;

/// Pushes first+1 .. last; the last producer to finish closes the channel (receivers drain).
inline void produce(channel& ch, std::uint64_t first, std::uint64_t last,
                    std::atomic<unsigned>& producers_left) {
    for (std::uint64_t i = first; i < last; ++i) {
        if (ch.push(i + 1) != channel_op_status::success) fatal("boost.fiber: push failed");
    }
    // acq_rel: the close follows every producer's values.
    if (producers_left.fetch_sub(1, std::memory_order_acq_rel) == 1) ch.close();
}

/// Pops until closed and drained; each value is tallied, then handed to `work`.
template <class Work = no_work> void consume(channel& ch, tally& t, Work work = {}) {
    std::uint64_t v = 0;
    while (ch.pop(v) == channel_op_status::success) {
        t.add(v);
        work(v);
    }
}

/// Fibers wait here until the timed region starts. Opened from the benchmark thread.
class gate {
  public:
    void wait() {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return open_; });
    }
    void open() {
        {
            std::unique_lock lock(mutex_);
            open_ = true;
        }
        cv_.notify_all();
    }

  private:
    boost::fibers::mutex mutex_;
    boost::fibers::condition_variable cv_;
    bool open_ = false;
};

/// Makes the calling thread use `shared_work` (idle threads sleep): a `fiber_pool` algorithm.
inline void use_shared_work(unsigned /*workers*/) {
    boost::fibers::use_scheduling_algorithm<boost::fibers::algo::shared_work>(true);
}

/// W threads under one scheduling algorithm, installed on each thread by `use_algorithm(W)`.
/// Thread 0's main fiber runs submitted jobs (which create fibers); the others park until
/// shutdown. Thread-safe `submit`.
class fiber_pool {
  public:
    explicit fiber_pool(unsigned workers, void (*use_algorithm)(unsigned) = use_shared_work) {
        for (unsigned i = 0; i < workers; ++i) {
            threads_.emplace_back([this, i, workers, use_algorithm] {
                use_algorithm(workers);
                if (i == 0) {
                    std::function<void()> job;
                    while (jobs_.pop(job) == channel_op_status::success) job();
                } else {
                    std::unique_lock lock(mutex_);
                    cv_.wait(lock, [this] { return stopping_; });
                }
            });
        }
    }
    fiber_pool(const fiber_pool&) = delete;
    fiber_pool& operator=(const fiber_pool&) = delete;
    ~fiber_pool() {
        jobs_.close();
        {
            std::unique_lock lock(mutex_);
            stopping_ = true;
        }
        cv_.notify_all();
        for (std::thread& t : threads_) t.join();
    }

    void submit(std::function<void()> job) {
        if (jobs_.push(std::move(job)) != channel_op_status::success) fatal("fiber_pool: closed");
    }

    /// Creates one detached fiber per body on thread 0 (launch::post: they run once scheduled),
    /// each waiting for `g` to open, then running its body, then calling `done.finish()`.
    /// Returns once every fiber is created. `g`, `done` and what the bodies use must outlive them.
    void launch_gated(std::vector<std::function<void()>> bodies, gate& g, completion& done) {
        completion created;
        created.reset(1);
        submit([&bodies, &g, &done, &created] {
            for (std::function<void()>& body : bodies) {
                boost::fibers::fiber(boost::fibers::launch::post, [body = std::move(body), &g,
                                                                   &done] {
                    g.wait();
                    body();
                    done.finish();
                }).detach();
            }
            created.finish();
        });
        created.wait("boost.fiber: creating fibers");
    }

  private:
    boost::fibers::buffered_channel<std::function<void()>> jobs_{4};
    boost::fibers::mutex mutex_;
    boost::fibers::condition_variable cv_;
    bool stopping_ = false; // guarded by mutex_
    std::vector<std::thread> threads_;
};

} // namespace bench::fibers
