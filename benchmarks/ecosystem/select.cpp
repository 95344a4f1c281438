// select over N channels: N bounded MPMC channels (capacity 64), each fed by its own producer
// with a share of the 16,384 values (producer k sends the values of topology {N, C}'s share k,
// then closes its sender); C consumers each hold a receiver of every channel and loop on
// `co_await cochan::select(rx_0, ..., rx_N-1)` until it reports `disconnected` (every channel
// disconnected and drained). Names: `select/bounded/<runtime>/cochan_mpmc/<N>ch<C>c`, N = 2, 4;
// C = 1, 4. Go's peer (benchmarks/peers/go) runs the same workload with `select`.
//
// current  the benchmark thread's event loop, resuming each task inside a resumption scope;
//          woken coroutines resume with cochan's default (on the waker's thread, once it
//          suspends or returns).
// mt2/mt4  a pool of W workers resuming each job inside a scope, with the default resumption
//          too (the ecosystem mt rows' setup).
// (Earlier runs, docs/decisions.md, D-004, used unscoped loops and `.resume_on(pool)`.)
#include "ecosystem.hpp"

#include "../common/channels.hpp"

#include <cochan/select.hpp>

#include <array>
#include <coroutine>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

namespace bench::eco {
namespace {

using tx_type = sender_t<true, true>;
using rx_type = receiver_t<true, true>;

// The producer takes its sender as a template parameter, as cochan.cpp's does.
template <class Tx>
task producer(Tx tx, std::uint64_t first, std::uint64_t last, completion& done) {
    {
        Tx mine = std::move(tx); // dropped inside the task: disconnection is timed
        for (std::uint64_t i = first; i < last; ++i) {
            auto r = co_await mine.send(i + 1);
            if (!r) fatal("select: send failed");
        }
        mine.close();
    }
    done.finish();
}

template <std::size_t N> task consumer(std::array<rx_type, N> rx, tally& t, completion& done) {
    {
        std::array<rx_type, N> mine = std::move(rx);
        for (;;) {
            auto r =
                co_await std::apply([](const auto&... r) { return cochan::select(r...); }, mine);
            if (!r) break; // every channel disconnected and drained (no token: never cancelled)
            t.add(std::visit([](std::uint64_t v) { return v; }, *r));
        }
    }
    done.finish();
}

template <std::size_t N, bool Pool> class select_case {
  public:
    select_case(queue_kind, topology t, unsigned workers) : topo_(t), workers_(workers) {
        if constexpr (Pool) pool_.emplace(workers_, mt_pool_options);
    }

    void prepare(tallies& t) {
        handles_.clear();
        done_.reset(topo_.producers + topo_.consumers);
        std::vector<tx_type> txs;
        std::array<rx_type, N> rxs = make_receivers(txs, std::make_index_sequence<N>{});
        // Consumers first, so they are waiting when the producers start (as in every case).
        for (unsigned c = 0; c < topo_.consumers; ++c)
            handles_.push_back(consumer<N>(rxs, t[c], done_).handle());
        for (unsigned p = 0; p < N; ++p) {
            handles_.push_back(
                producer(std::move(txs[p]), topo_.first(p), topo_.last(p), done_).handle());
        }
        // rxs and txs (this function's copies) are dropped here, before the timed region.
    }

    void run() {
        if constexpr (Pool) {
            for (std::coroutine_handle<> h : handles_) pool_->post(h);
            done_.wait("select mt");
        } else {
            for (std::coroutine_handle<> h : handles_) loop_.post(h);
            loop_.run_all();
            if (!done_.done()) fatal("select current: the loop ran dry with tasks still waiting");
        }
    }

  private:
    template <std::size_t... I>
    static std::array<rx_type, N> make_receivers(std::vector<tx_type>& txs,
                                                 std::index_sequence<I...>) {
        auto one = [&txs](std::size_t) {
            auto [tx, rx] = make_channel<true, true>();
            txs.push_back(std::move(tx));
            return std::move(rx);
        };
        return {one(I)...};
    }

    topology topo_;
    unsigned workers_;
    event_loop loop_{true}; // resumption scopes
    std::optional<cochan_test::thread_pool> pool_;
    completion done_;
    std::vector<std::coroutine_handle<>> handles_;
};

template <std::size_t N> void add_channels(const runtime& rt, unsigned consumers) {
    const topology t{static_cast<unsigned>(N), consumers};
    const std::string name = std::string("select/bounded/") + rt.name + "/cochan_mpmc/" +
                             std::to_string(N) + "ch" + std::to_string(consumers) + "c";
    if (rt.workers == 0)
        add_named<select_case<N, false>>(name, queue_kind::bounded, rt.workers, t);
    else
        add_named<select_case<N, true>>(name, queue_kind::bounded, rt.workers, t);
}

} // namespace

void register_select() {
    for (const runtime& rt : coroutine_runtimes) {
        for (unsigned consumers : {1u, 4u}) {
            add_channels<2>(rt, consumers);
            add_channels<4>(rt, consumers);
        }
    }
}

} // namespace bench::eco
