// The peers that run on OS threads: each producer and each consumer is its own thread (P + C
// threads, created once per case and reused by every sample; see bench::thread_gang). There is
// no event loop and no W, so these cases are registered once under the runtime `threads`, and
// the report compares them with every runtime row of the same queue and topology.
//
// moodycamel  BlockingConcurrentQueue (unbounded by nature), with a producer token per producer
//             and a consumer token per consumer, made before the timed region. Bounded rows
//             add moodycamel's LightweightSemaphore of 64 free slots: a producer waits for a
//             slot before each enqueue, a consumer returns one after each dequeue. The queue
//             has no close: the producer enqueues one end marker per consumer after its
//             values, and a consumer stops at its first marker. With one producer the queue is
//             FIFO, so every value is taken before the last marker. With 8 producers it is FIFO
//             only per producer, so markers cannot prove the queue drained without a quota:
//             the 8P rows have no moodycamel case.
// mutex_deque std::mutex + std::condition_variable + std::deque with a closed flag; the last
//             producer closes it; consumers drain, then stop. Bounded rows add a second
//             condition variable for "not full". Notifications are made after unlocking.
// cochan_blocking  cochan's blocking API (`blocking_send`/`blocking_recv`) on SPMC (1P rows)
//             and MPMC (8P rows); each producer closes its sender when done.
#include "ecosystem.hpp"

#include "../common/channels.hpp"
#include "../common/os_queues.hpp"

#include <atomic>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace bench::eco {
namespace {

// ---- moodycamel -------------------------------------------------------------------------------

class moodycamel_case {
  public:
    moodycamel_case(queue_kind q, topology t, unsigned)
        : bounded_(q == queue_kind::bounded), topo_(t), gang_(t.producers + t.consumers) {
        gang_.set_role([this](unsigned i) {
            if (i < topo_.producers)
                produce(i);
            else
                consume(i - topo_.producers);
        });
    }

    void prepare(tallies& t) {
        q_.emplace(bounded_, topo_.producers, topo_.consumers);
        tallies_ = &t;
        producers_left_.store(topo_.producers, std::memory_order_relaxed);
    }

    void run() { gang_.run("moodycamel"); }

  private:
    void produce(unsigned p) {
        for (std::uint64_t i = topo_.first(p); i < topo_.last(p); ++i) q_->push(p, i + 1);
        if (producers_left_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            for (unsigned c = 0; c < topo_.consumers; ++c) q_->push(p, end_marker);
        }
    }

    void consume(unsigned c) {
        tally& t = (*tallies_)[c];
        for (std::uint64_t v = q_->pop(c); v != end_marker; v = q_->pop(c)) t.add(v);
    }

    bool bounded_;
    topology topo_;
    std::optional<moodycamel_queue> q_;
    tallies* tallies_ = nullptr;
    std::atomic<unsigned> producers_left_{0};
    thread_gang gang_; // last: joined before the members its threads use are destroyed
};

// ---- std::mutex + std::condition_variable + std::deque ----------------------------------------

class mutex_deque_case {
  public:
    mutex_deque_case(queue_kind q, topology t, unsigned)
        : capacity_(q == queue_kind::bounded ? bounded_capacity : SIZE_MAX), topo_(t),
          gang_(t.producers + t.consumers) {
        gang_.set_role([this](unsigned i) {
            if (i < topo_.producers)
                produce(i);
            else
                consume(i - topo_.producers);
        });
    }

    void prepare(tallies& t) {
        q_.emplace(capacity_);
        tallies_ = &t;
        producers_left_.store(topo_.producers, std::memory_order_relaxed);
    }

    void run() { gang_.run("mutex_deque"); }

  private:
    void produce(unsigned p) {
        for (std::uint64_t i = topo_.first(p); i < topo_.last(p); ++i) q_->push(i + 1);
        if (producers_left_.fetch_sub(1, std::memory_order_acq_rel) == 1) q_->close();
    }

    void consume(unsigned c) {
        tally& t = (*tallies_)[c];
        std::uint64_t v = 0;
        while (q_->pop(v)) t.add(v);
    }

    std::size_t capacity_;
    topology topo_;
    std::optional<locked_queue> q_;
    tallies* tallies_ = nullptr;
    std::atomic<unsigned> producers_left_{0};
    thread_gang gang_;
};

// ---- cochan's blocking API --------------------------------------------------------------------

template <bool Multi, bool Bounded> class cochan_blocking_case {
    using sender = sender_t<Multi, Bounded>;
    using receiver = receiver_t<Multi, Bounded>;

  public:
    cochan_blocking_case(queue_kind, topology t, unsigned)
        : topo_(t), gang_(t.producers + t.consumers) {
        gang_.set_role([this](unsigned i) {
            if (i < topo_.producers)
                produce(i);
            else
                consume(i - topo_.producers);
        });
    }

    void prepare(tallies& t) {
        txs_.clear();
        rxs_.clear();
        auto [tx, rx] = make_channel<Multi, Bounded>();
        for (unsigned c = 0; c < topo_.consumers; ++c) rxs_.push_back(rx);
        if constexpr (Multi) {
            for (unsigned p = 0; p < topo_.producers; ++p) txs_.push_back(tx);
        } else {
            txs_.push_back(std::move(tx));
        }
        tallies_ = &t;
        // tx and rx are dropped here: only the threads' endpoints remain.
    }

    void run() { gang_.run("cochan_blocking"); }

  private:
    void produce(unsigned p) {
        sender mine = std::move(txs_[p]); // dropped inside the timed region
        for (std::uint64_t i = topo_.first(p); i < topo_.last(p); ++i) {
            std::uint64_t v = i + 1;
            auto r = mine.blocking_send(v);
            if (!r) fatal("cochan_blocking: send failed");
        }
        mine.close();
    }

    void consume(unsigned c) {
        receiver mine = std::move(rxs_[c]);
        tally& t = (*tallies_)[c];
        for (;;) {
            auto r = mine.blocking_recv();
            if (!r) break;
            t.add(*r);
        }
    }

    topology topo_;
    std::vector<sender> txs_;
    std::vector<receiver> rxs_;
    tallies* tallies_ = nullptr;
    thread_gang gang_;
};

template <bool Multi, bool Bounded> void add_cochan_blocking(queue_kind q, const topology& t) {
    if constexpr (has_blocking_api<receiver_t<Multi, Bounded>>) {
        add<cochan_blocking_case<Multi, Bounded>>(q, os_threads, "cochan_blocking", t);
    } else {
        // TODO(blocking API): registered automatically once the headers provide blocking_recv.
        (void)q;
        (void)t;
    }
}

} // namespace

void register_os_threads() {
    for (queue_kind q : queue_kinds) {
        const bool b = q == queue_kind::bounded;
        for (const topology& t : topologies()) {
            if (t.producers == 1) add<moodycamel_case>(q, os_threads, "moodycamel", t);
            add<mutex_deque_case>(q, os_threads, "mutex_deque", t);
            if (t.producers == 1) {
                if (b)
                    add_cochan_blocking<false, true>(q, t);
                else
                    add_cochan_blocking<false, false>(q, t);
            } else {
                if (b)
                    add_cochan_blocking<true, true>(q, t);
                else
                    add_cochan_blocking<true, false>(q, t);
            }
        }
    }
}

} // namespace bench::eco
