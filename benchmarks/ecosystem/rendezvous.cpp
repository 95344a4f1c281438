// Rendezvous hand-off latency: a ping-pong over two rendezvous channels (capacity 0). The pinger
// sends each of the 16,384 values on `ping` and waits for it back on `pong`; the ponger echoes
// every value until `ping` is disconnected, then closes `pong`. One sample = 16,384 round trips
// = 32,768 hand-offs; the pinger's tally checks that every value came back. Names:
// `rendezvous/<runtime>/<impl>/pingpong`; the report gives ns per hand-off (sample / 32,768).
//
// current  two coroutines on the benchmark thread's event loop, resumed inline (cochan's
//          default): `cochan_spmc`, `cochan_mpmc` (spmc:: / mpmc::rendezvous).
// mt2      the same on a pool of 2 workers, every operation `.resume_on(pool)`.
// threads  two OS threads with `blocking_send` / `blocking_recv` (SPMC): `cochan_blocking`.
// Go's peer: two goroutines over unbuffered channels, GOMAXPROCS 1 (current) and 2 (mt2).
#include "ecosystem.hpp"

#include "../common/channels.hpp"

#include <coroutine>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
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

struct resume_inline {};

template <class Tx, class Post> auto send_on(Tx& tx, std::uint64_t v, Post post) {
    if constexpr (std::is_same_v<Post, resume_inline>)
        return tx.send(v);
    else
        return tx.send(v).resume_on(post);
}

template <class Rx, class Post> auto recv_on(Rx& rx, Post post) {
    if constexpr (std::is_same_v<Post, resume_inline>)
        return rx.recv();
    else
        return rx.recv().resume_on(post);
}

template <class Tx, class Rx, class Post>
task pinger(Tx ping, Rx pong, tally& t, Post post, completion& done) {
    {
        Tx out = std::move(ping);
        Rx back = std::move(pong);
        for (std::uint64_t v = 1; v <= total_values; ++v) {
            if (!co_await send_on(out, v, post)) fatal("rendezvous: ping failed");
            auto r = co_await recv_on(back, post);
            if (!r) fatal("rendezvous: no pong");
            t.add(*r);
        }
        out.close();
    }
    done.finish();
}

template <class Rx, class Tx, class Post>
task ponger(Rx ping, Tx pong, Post post, completion& done) {
    {
        Rx in = std::move(ping);
        Tx out = std::move(pong);
        for (;;) {
            auto r = co_await recv_on(in, post);
            if (!r) break; // the pinger closed: done
            if (!co_await send_on(out, *r, post)) fatal("rendezvous: pong failed");
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
        ponger_ = ponger(std::move(ping_rx), std::move(pong_tx), poster(), done_).handle();
        pinger_ = pinger(std::move(ping_tx), std::move(pong_rx), t[0], poster(), done_).handle();
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
    auto poster() {
        if constexpr (Pool)
            return pool_->executor();
        else
            return resume_inline{};
    }

    event_loop loop_;
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
