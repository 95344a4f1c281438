// Boost.Fiber's `buffered_channel` with fibers.
//
// current: the producer and consumers are fibers on the benchmark thread (Boost's default
//          round_robin scheduler), created before the timed region; the timed region joins them.
// mt2/mt4: fibers on W threads sharing Boost's `shared_work` scheduler (one ready queue for all
//          W threads; idle threads sleep). The fibers are created on one of the W threads before
//          the timed region and park on a gate; the timed region opens the gate and waits.
//          Boost's `work_stealing` scheduler cannot be used here: it keeps a process-wide
//          registry sized by the first group's thread count (a static barrier and call_once in
//          its constructor), so one process cannot host a 2-thread group and then a 4-thread one.
//
// buffered_channel's capacity must be a power of two and it holds capacity - 1 values: the
// bounded rows use 64 (63 values in flight), the unbounded rows 32,768 (room for all 16,384, so
// sends never wait). `close()` lets receivers drain, so the last producer closes the channel
// and consumers pop until `closed`, as with cochan.
#include "ecosystem.hpp"

#include <boost/fiber/algo/shared_work.hpp>
#include <boost/fiber/buffered_channel.hpp>
#include <boost/fiber/condition_variable.hpp>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/mutex.hpp>
#include <boost/fiber/operations.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace bench::eco {
namespace {

using channel = boost::fibers::buffered_channel<std::uint64_t>;
using boost::fibers::channel_op_status;

std::size_t fiber_capacity(queue_kind q) {
    return q == queue_kind::bounded ? 64 : 32768;
}

void produce(channel& ch, std::uint64_t first, std::uint64_t last,
             std::atomic<unsigned>& producers_left) {
    for (std::uint64_t i = first; i < last; ++i) {
        if (ch.push(i + 1) != channel_op_status::success) fatal("boost.fiber: push failed");
    }
    // acq_rel: the close follows every producer's values.
    if (producers_left.fetch_sub(1, std::memory_order_acq_rel) == 1) ch.close();
}

void consume(channel& ch, tally& t) {
    std::uint64_t v = 0;
    while (ch.pop(v) == channel_op_status::success) t.add(v);
}

/// One sample's channel and bookkeeping, shared by its fibers.
struct sample {
    explicit sample(std::size_t capacity, unsigned producers)
        : ch(capacity), producers_left(producers) {}
    channel ch;
    std::atomic<unsigned> producers_left;
};

class current_case {
  public:
    current_case(queue_kind q, topology t, unsigned) : topo_(t), capacity_(fiber_capacity(q)) {}

    void prepare(tallies& t) {
        fibers_.clear();
        s_ = std::make_unique<sample>(capacity_, topo_.producers);
        // launch::post: created (stacks allocated) now, run only once this thread blocks.
        for (unsigned c = 0; c < topo_.consumers; ++c)
            fibers_.emplace_back(boost::fibers::launch::post,
                                 [this, &t, c] { consume(s_->ch, t[c]); });
        for (unsigned p = 0; p < topo_.producers; ++p) {
            fibers_.emplace_back(boost::fibers::launch::post, [this, p] {
                produce(s_->ch, topo_.first(p), topo_.last(p), s_->producers_left);
            });
        }
    }

    void run() {
        for (boost::fibers::fiber& f : fibers_) f.join();
    }

  private:
    topology topo_;
    std::size_t capacity_;
    std::unique_ptr<sample> s_;
    std::vector<boost::fibers::fiber> fibers_;
};

/// W threads under `shared_work`. Thread 0's main fiber runs submitted jobs (which create
/// fibers); the others park until shutdown. Thread-safe `submit`.
class fiber_pool {
  public:
    explicit fiber_pool(unsigned workers) {
        for (unsigned i = 0; i < workers; ++i) {
            threads_.emplace_back([this, i] {
                boost::fibers::use_scheduling_algorithm<boost::fibers::algo::shared_work>(true);
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

  private:
    boost::fibers::buffered_channel<std::function<void()>> jobs_{4};
    boost::fibers::mutex mutex_;
    boost::fibers::condition_variable cv_;
    bool stopping_ = false; // guarded by mutex_
    std::vector<std::thread> threads_;
};

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

class mt_case {
  public:
    mt_case(queue_kind q, topology t, unsigned workers)
        : topo_(t), capacity_(fiber_capacity(q)), pool_(workers) {}

    void prepare(tallies& t) {
        s_ = std::make_unique<sample>(capacity_, topo_.producers);
        gate_ = std::make_unique<gate>();
        done_.reset(topo_.producers + topo_.consumers);
        completion created;
        created.reset(1);
        pool_.submit([this, &t, &created] {
            for (unsigned c = 0; c < topo_.consumers; ++c) {
                boost::fibers::fiber(boost::fibers::launch::post, [this, &t, c] {
                    gate_->wait();
                    consume(s_->ch, t[c]);
                    done_.finish();
                }).detach();
            }
            for (unsigned p = 0; p < topo_.producers; ++p) {
                boost::fibers::fiber(boost::fibers::launch::post, [this, p] {
                    gate_->wait();
                    produce(s_->ch, topo_.first(p), topo_.last(p), s_->producers_left);
                    done_.finish();
                }).detach();
            }
            created.finish();
        });
        created.wait("boost.fiber mt: creating fibers");
    }

    void run() {
        gate_->open();
        done_.wait("boost.fiber mt");
    }

  private:
    topology topo_;
    std::size_t capacity_;
    std::unique_ptr<sample> s_;
    std::unique_ptr<gate> gate_;
    completion done_;
    fiber_pool pool_; // last: joined first, while the members its fibers use are alive
};

} // namespace

void register_boost_fiber() {
    for (queue_kind q : queue_kinds) {
        for (const runtime& rt : coroutine_runtimes) {
            for (const topology& t : topologies()) {
                if (rt.workers == 0)
                    add<current_case>(q, rt, "boost_fiber", t);
                else
                    add<mt_case>(q, rt, "boost_fiber", t);
            }
        }
    }
}

} // namespace bench::eco
