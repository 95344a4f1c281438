// Rendezvous hand-off latency: a ping-pong over two rendezvous channels (capacity 0). The pinger
// sends each of the 16,384 values on `ping` and waits for it back on `pong`; the ponger echoes
// every value until `ping` is disconnected, then closes `pong`. One sample = 16,384 round trips
// = 32,768 hand-offs; the pinger's tally checks that every value came back. Names:
// `rendezvous/<runtime>/<impl>/pingpong`; the report gives ns per hand-off (sample / 32,768).
//
// current  two coroutines on the benchmark thread's event loop (tasks resumed in resumption
//          scopes), woken with cochan's default: `cochan_spmc`, `cochan_mpmc`.
// mt2      the same on a pool of 2 workers resuming jobs in scopes, default resumption (the
//          pair stays on one worker, as Go's runtime keeps it on one P).
// (Earlier runs, docs/decisions.md, D-004, used an unscoped loop and `.resume_on(pool)`.)
// threads  two OS threads with `blocking_send` / `blocking_recv` (SPMC): `cochan_blocking`.
// Go's peer: two goroutines over unbuffered channels, GOMAXPROCS 1 (current) and 2 (mt2).
#include "ecosystem.hpp"

#include "../common/channels.hpp"

#include <coroutine>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace bench::eco {
namespace {

template <bool Multi> auto make_rendezvous() {
    if constexpr (Multi)
        return cochan::mpmc::rendezvous<std::uint64_t>();
    else
        return cochan::spmc::rendezvous<std::uint64_t>();
}
template <bool Multi> using rv_tx = typename decltype(make_rendezvous<Multi>())::first_type;
template <bool Multi> using rv_rx = typename decltype(make_rendezvous<Multi>())::second_type;

template <class Tx, class Rx> task pinger(Tx ping, Rx pong, tally& t, completion& done) {
    {
        Tx out = std::move(ping);
        Rx back = std::move(pong);
        for (std::uint64_t v = 1; v <= total_values; ++v) {
            if (!co_await out.send(v)) fatal("rendezvous: ping failed");
            auto r = co_await back.recv();
            if (!r) fatal("rendezvous: no pong");
            t.add(*r);
        }
        out.close();
    }
    done.finish();
}

template <class Rx, class Tx> task ponger(Rx ping, Tx pong, completion& done) {
    {
        Rx in = std::move(ping);
        Tx out = std::move(pong);
        for (;;) {
            auto r = co_await in.recv();
            if (!r) break; // the pinger closed: done
            if (!co_await out.send(*r)) fatal("rendezvous: pong failed");
        }
        out.close();
    }
    done.finish();
}

template <bool Multi, bool Pool> class coroutine_case {
  public:
    coroutine_case(queue_kind, topology, unsigned workers) {
        if constexpr (Pool) pool_.emplace(workers, mt_pool_options);
    }

    void prepare(tallies& t) {
        done_.reset(2);
        auto [ping_tx, ping_rx] = make_rendezvous<Multi>();
        auto [pong_tx, pong_rx] = make_rendezvous<Multi>();
        // The ponger first, so it waits when the first ping comes.
        ponger_ = ponger(std::move(ping_rx), std::move(pong_tx), done_).handle();
        pinger_ = pinger(std::move(ping_tx), std::move(pong_rx), t[0], done_).handle();
    }

    void run() {
        if constexpr (Pool) {
            pool_->post(ponger_);
            pool_->post(pinger_);
            done_.wait("rendezvous mt");
        } else {
            loop_.post(ponger_);
            loop_.post(pinger_);
            loop_.run_all();
            if (!done_.done()) fatal("rendezvous current: the loop ran dry with tasks waiting");
        }
    }

  private:
    event_loop loop_{true}; // resumption scopes
    std::optional<cochan_test::thread_pool> pool_;
    completion done_;
    std::coroutine_handle<> ponger_, pinger_;
};

/// Two OS threads (created once per case, see bench::thread_gang) and the blocking API.
class blocking_case {
  public:
    blocking_case(queue_kind, topology, unsigned) : gang_(2) {
        gang_.set_role([this](unsigned i) {
            if (i == 0)
                pong_role();
            else
                ping_role();
        });
    }

    void prepare(tallies& t) {
        tally_ = &t[0];
        auto [ping_tx, ping_rx] = make_rendezvous<false>();
        auto [pong_tx, pong_rx] = make_rendezvous<false>();
        ping_tx_.emplace(std::move(ping_tx));
        ping_rx_.emplace(std::move(ping_rx));
        pong_tx_.emplace(std::move(pong_tx));
        pong_rx_.emplace(std::move(pong_rx));
    }

    void run() { gang_.run("rendezvous threads"); }

  private:
    void ping_role() {
        rv_tx<false> out = std::move(*ping_tx_);
        rv_rx<false> back = std::move(*pong_rx_);
        ping_tx_.reset();
        pong_rx_.reset();
        for (std::uint64_t v = 1; v <= total_values; ++v) {
            if (!out.blocking_send(v)) fatal("rendezvous threads: ping failed");
            auto r = back.blocking_recv();
            if (!r) fatal("rendezvous threads: no pong");
            tally_->add(*r);
        }
        out.close();
    }

    void pong_role() {
        rv_rx<false> in = std::move(*ping_rx_);
        rv_tx<false> out = std::move(*pong_tx_);
        ping_rx_.reset();
        pong_tx_.reset();
        while (auto r = in.blocking_recv()) {
            if (!out.blocking_send(*r)) fatal("rendezvous threads: pong failed");
        }
        out.close();
    }

    tally* tally_ = nullptr;
    std::optional<rv_tx<false>> ping_tx_, pong_tx_; // each moved out by its thread
    std::optional<rv_rx<false>> ping_rx_, pong_rx_;
    thread_gang gang_; // last: its threads use the members above
};

template <class Case> void add_pingpong(const char* runtime_name, const char* impl) {
    add_named<Case>(std::string("rendezvous/") + runtime_name + "/" + impl + "/pingpong",
                    queue_kind::bounded, runtime_name[0] == 'm' ? 2 : 0, {1, 1});
}

} // namespace

void register_rendezvous() {
    add_pingpong<coroutine_case<false, false>>("current", "cochan_spmc");
    add_pingpong<coroutine_case<true, false>>("current", "cochan_mpmc");
    add_pingpong<coroutine_case<false, true>>("mt2", "cochan_spmc");
    add_pingpong<coroutine_case<true, true>>("mt2", "cochan_mpmc");
    add_pingpong<blocking_case>("threads", "cochan_blocking");
}

} // namespace bench::eco
