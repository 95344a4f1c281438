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

#include "../common/fibers.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace bench::eco {
namespace {

using fibers::channel;
using fibers::consume;
using fibers::produce;

std::size_t fiber_capacity(queue_kind q) {
    return q == queue_kind::bounded ? 64 : 32768;
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

class mt_case {
  public:
    mt_case(queue_kind q, topology t, unsigned workers)
        : topo_(t), capacity_(fiber_capacity(q)), pool_(workers) {}

    void prepare(tallies& t) {
        s_ = std::make_unique<sample>(capacity_, topo_.producers);
        gate_ = std::make_unique<fibers::gate>();
        done_.reset(topo_.producers + topo_.consumers);
        std::vector<std::function<void()>> bodies;
        for (unsigned c = 0; c < topo_.consumers; ++c)
            bodies.emplace_back([this, &t, c] { consume(s_->ch, t[c]); });
        for (unsigned p = 0; p < topo_.producers; ++p) {
            bodies.emplace_back(
                [this, p] { produce(s_->ch, topo_.first(p), topo_.last(p), s_->producers_left); });
        }
        pool_.launch_gated(std::move(bodies), *gate_, done_);
    }

    void run() {
        gate_->open();
        done_.wait("boost.fiber mt");
    }

  private:
    topology topo_;
    std::size_t capacity_;
    std::unique_ptr<sample> s_;
    std::unique_ptr<fibers::gate> gate_;
    completion done_;
    fibers::fiber_pool pool_; // last: joined first, while the members its fibers use are alive
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
