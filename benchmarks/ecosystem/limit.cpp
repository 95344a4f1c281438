// The limit rows, one thread, no task switch:
//
// `limit`: the same 16,384 values pushed into and popped from a plain single-threaded ring,
// with no channel and no synchronisation. The floor no channel can beat.
//   bounded:   a 64-slot ring; the "producer" fills it, the "consumer" drains it, repeated.
//   unbounded: a 16,384-slot ring; everything is pushed, then everything is popped.
//
// `limit_moodycamel`: the same pushes and pops, in the same order, through moodycamel's
// lock-free `ConcurrentQueue` (a producer token and a consumer token, made before the timed
// region), still on one thread: what a thread-safe queue costs per value when nothing waits
// and nothing switches: the "single-thread limit" of docs/contract.md, target P4.
#include "ecosystem.hpp"

#include <concurrentqueue/concurrentqueue.h>

#include <cstdint>
#include <vector>

namespace bench::eco {
namespace {

class limit_case {
  public:
    limit_case(queue_kind q, topology, unsigned)
        : ring_(q == queue_kind::bounded ? bounded_capacity : total_values) {}

    void prepare(tallies& t) { tally_ = &t[0]; }

    void run() {
        const std::uint64_t cap = ring_.size(); // a power of two
        const std::uint64_t mask = cap - 1;
        std::uint64_t next = 1, head = 0, tail = 0; // tail - head values are buffered
        while (next <= total_values) {
            while (tail - head < cap && next <= total_values) ring_[tail++ & mask] = next++;
            benchmark::ClobberMemory(); // the pushes really happen before the pops
            while (head != tail) tally_->add(ring_[head++ & mask]);
            benchmark::ClobberMemory();
        }
    }

  private:
    std::vector<std::uint64_t> ring_;
    tally* tally_ = nullptr;
};

class limit_moodycamel_case {
  public:
    limit_moodycamel_case(queue_kind q, topology, unsigned)
        : batch_(q == queue_kind::bounded ? bounded_capacity : total_values) {}

    void prepare(tallies& t) { tally_ = &t[0]; }

    void run() {
        std::uint64_t next = 1;
        while (next <= total_values) {
            for (std::uint64_t i = 0; i < batch_ && next <= total_values; ++i) {
                if (!queue_.enqueue(producer_, next++)) bench::fatal("limit_moodycamel: enqueue");
            }
            std::uint64_t v = 0;
            while (queue_.try_dequeue(consumer_, v)) tally_->add(v);
        }
    }

  private:
    std::uint64_t batch_; // values pushed before they are all popped
    moodycamel::ConcurrentQueue<std::uint64_t> queue_{total_values};
    moodycamel::ProducerToken producer_{queue_};
    moodycamel::ConsumerToken consumer_{queue_};
    tally* tally_ = nullptr;
};

} // namespace

void register_limit() {
    for (queue_kind q : queue_kinds) {
        add<limit_case>(q, coroutine_runtimes[0], "limit", {1, 1});
        add<limit_moodycamel_case>(q, coroutine_runtimes[0], "limit_moodycamel", {1, 1});
    }
}

} // namespace bench::eco
