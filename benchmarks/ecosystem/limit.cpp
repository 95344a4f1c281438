// The `limit` row: the same 16,384 values pushed into and popped from a plain single-threaded
// ring, with no channel, no synchronisation and no task switch. The floor no channel can beat.
//
// bounded:   a 64-slot ring; the "producer" fills it, the "consumer" drains it, repeated.
// unbounded: a 16,384-slot ring; everything is pushed, then everything is popped.
#include "ecosystem.hpp"

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

} // namespace

void register_limit() {
    for (queue_kind q : queue_kinds) add<limit_case>(q, coroutine_runtimes[0], "limit", {1, 1});
}

} // namespace bench::eco
