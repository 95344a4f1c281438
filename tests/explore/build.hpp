// Building a scenario from its spec: scenario_spec (the channels' kinds are template
// arguments; their capacities, the producers' and consumers' scripts, the endpoints the harness
// holds, and the events the explorer may inject, each between steps and/or at the hook points
// of its `*_at` mask), build<Kind0, Kind1>() that sets one run up from it, and
// make_scenario<Kind0, Kind1>() that turns a spec into a scenario. A scenario has one channel,
// or two when a script or a field names channel 1 (a select receives from both).
#pragma once

#include "explore/hooks.hpp" // first: it defines COCHAN_DETAIL_INTERLEAVE

#include <cochan/cochan.hpp>

#include "explore/actors.hpp"
#include "explore/ledger.hpp"
#include "explore/run_state.hpp"
#include "explore/scripts.hpp"

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace cochan_explore {

/// The depth bound of a scenario with none: the DFS enumerates every schedule of the scenario
/// (none is that long; `explore()` reports whether one was).
inline constexpr std::size_t no_depth_bound = 1000;

/// A channel scenario: its name and what it exercises, its channels (their kinds are
/// make_scenario's template arguments), producers, consumers, the events the explorer may
/// inject, each between steps (at::step) and/or at the hook points of its `*_at` mask, and how
/// far to explore it. An aggregate, written with designated initializers (in this order); what
/// a scenario leaves out keeps its default: none of that kind of event, capacity 1, one
/// channel, no depth bound. Actors are numbered producers first, then consumers. Each member
/// has a default initializer, if only `{}`: GCC's -Wmissing-field-initializers stays quiet only
/// for those when a designated initializer leaves a member out.
struct scenario_spec {
    std::string name{};
    std::string what{};         // one line: what it exercises (cochan_explore --list)
    std::size_t capacity = 1;   // channel 0's (a rendezvous kind ignores it)
    std::size_t capacity_1 = 1; // channel 1's, if there is one
    std::vector<producer_script> producers{};
    std::vector<consumer_script> consumers{};
    int spare_receivers = 0;     // receiver clones of channel 0 the harness holds; an event drops
                                 // (or closes) each
    int spare_senders = 0;       // (MPMC) sender clones of channel 0 the harness holds; an event
                                 // ends each
    bool close_spares = false;   // the spare senders' event is close() (else: drop)
    bool close_spare_rx = false; // the spare receivers' event is rx.close(), which closes the
                                 // channel for sending (else: drop)
    int spare_receivers_1 = 0;   // the same, of channel 1
    int spare_senders_1 = 0;
    where_mask spare_at = at::step;
    std::vector<int> stops{}; // actors (producers first, then consumers) an event may stop
    where_mask stop_at = at::step;
    std::vector<int> destroys{}; // actors an event may destroy while suspended
    where_mask destroy_at = at::step;
    int harness_sends = 0; // events: the harness try_sends (send, unbounded) a value of its own
                           // through the first spare sender of harness_channel
    where_mask harness_send_at = at::step;
    int harness_recvs = 0; // events: the harness try_recvs through the first spare receiver
    where_mask harness_recv_at = at::step;
    int harness_channel = 0;
    std::size_t depth = no_depth_bound; // DFS bound
    std::size_t randoms = 0;            // random schedules after the DFS (if it was bounded)

    /// Channel 1 exists: a script or a field names it.
    bool two_channels() const {
        for (const auto& p : producers) {
            if (p.channel == 1) return true;
        }
        for (const auto& c : consumers) {
            if (c.select || c.channel == 1) return true;
        }
        return spare_receivers_1 != 0 || spare_senders_1 != 0 || harness_channel == 1;
    }
};

/// One channel of a run and the endpoints set up for it (each counted by the ledger), which
/// the actors and the harness take in order.
template <class Kind> struct channel_endpoints {
    using pair_type = decltype(Kind::make(1));
    using Tx = typename pair_type::first_type;
    using Rx = typename pair_type::second_type;
    std::vector<held<Tx>> senders;
    std::vector<held<Rx>> receivers;
    std::size_t next_tx = 0;
    std::size_t next_rx = 0;

    held<Tx> take_sender() { return std::move(senders.at(next_tx++)); }
    held<Rx> take_receiver() { return std::move(receivers.at(next_rx++)); }
};

/// Makes channel `ch` of kind `Kind` with `n_tx` senders and `n_rx` receivers (clones of the
/// first; an SPMC channel has at most one sender).
template <class Kind>
channel_endpoints<Kind> open_channel(run_state& run, int ch, std::size_t capacity, std::size_t n_tx,
                                     std::size_t n_rx) {
    auto channel = Kind::make(capacity);
    auto& tx = channel.first;
    auto& rx = channel.second;
    using E = channel_endpoints<Kind>;

    // The harness keeps its own reference to the queue (not an endpoint: it changes nothing the
    // channel's logic sees) so size() can be read until the run ends.
    // An operation source holds a counted queue reference; released at the end of the run.
    auto* source = new auto(make_op_source(rx));
    std::size_t cap = 0;
    if constexpr (Kind::bounded) cap = tx.capacity();
    run.observe_channel(
        ch, Kind::bounded, cap, [source] { return source->queue->size(); },
        [source] { delete source; });

    E e;
    if constexpr (std::is_copy_constructible_v<typename E::Tx>) {
        for (std::size_t i = 1; i < n_tx; ++i)
            e.senders.emplace_back(tx, run.values.live_senders(ch));
    } else if (n_tx > 1) {
        throw std::logic_error("an SPMC channel has one sender");
    }
    if (n_tx != 0) e.senders.emplace_back(std::move(tx), run.values.live_senders(ch));
    for (std::size_t i = 1; i < n_rx; ++i)
        e.receivers.emplace_back(rx, run.values.live_receivers(ch));
    if (n_rx != 0) e.receivers.emplace_back(std::move(rx), run.values.live_receivers(ch));
    return e; // an endpoint nobody took is dropped here, before any actor runs
}

/// Sets up one run of `spec` on channels of kinds `Kind0` and (if there is a channel 1) `Kind1`
/// (support/channels.hpp).
/// `t`, whose promise names the explorer's queue as its scheduler if `scheduled`.
inline actor_task scheduled_if(bool scheduled, actor_task t) {
    t.handle.promise().scheduled = scheduled;
    return t;
}

template <class Kind0, class Kind1> void build(run_state& run, const scenario_spec& spec) {
    const bool two = spec.two_channels();
    std::array<std::size_t, 2> n_tx{};
    std::array<std::size_t, 2> n_rx{};
    for (const auto& p : spec.producers) ++n_tx.at(static_cast<std::size_t>(p.channel));
    for (const auto& c : spec.consumers) {
        if (c.select) {
            ++n_rx[0];
            ++n_rx[1];
        } else {
            ++n_rx.at(static_cast<std::size_t>(c.channel));
        }
    }
    n_tx[0] += static_cast<std::size_t>(spec.spare_senders);
    n_tx[1] += static_cast<std::size_t>(spec.spare_senders_1);
    n_rx[0] += static_cast<std::size_t>(spec.spare_receivers);
    n_rx[1] += static_cast<std::size_t>(spec.spare_receivers_1);
    auto e0 = open_channel<Kind0>(run, 0, spec.capacity, n_tx[0], n_rx[0]);
    std::optional<channel_endpoints<Kind1>> e1;
    if (two) e1.emplace(open_channel<Kind1>(run, 1, spec.capacity_1, n_tx[1], n_rx[1]));
    // Calls f(endpoints of channel ch).
    auto on = [&](int ch, auto&& f) {
        if (ch == 0) {
            f(e0);
        } else {
            if (!e1) throw std::logic_error("channel 1 was not set up");
            f(*e1);
        }
    };
    const std::string suffix_1 = " of channel 1";

    // Each gated actor's gate, and the event that opens it while the actor waits there.
    auto make_gate = [&run](bool wanted, actor_info& a) -> gate* {
        if (!wanted) return nullptr;
        auto g = std::make_shared<gate>(cochan::spmc::unbounded<int>());
        run.add_event(
            "kick " + a.name, [p = &a] { return p->gate_op && p->linked(); },
            [g] { (void)g->tx->send(0); });
        run.on_cleanup([g] {
            g->tx.reset();
            g->rx.reset();
        });
        return g.get();
    };

    for (std::size_t i = 0; i < spec.producers.size(); ++i) {
        const auto& script = spec.producers[i];
        auto& a = run.actors.add("P" + std::to_string(i), static_cast<int>(i));
        a.use_token = script.token; // from the start: a stop may come before it runs
        a.inline_resume = script.inline_resume;
        a.channel = script.channel;
        a.wait_mask = 1U << a.channel;
        gate* g = make_gate(script.gate, a);
        on(script.channel, [&](auto& e) {
            run.actors.start(
                a, scheduled_if(script.via_scheduler, produce(run, a, e.take_sender(), script, g)));
        });
    }
    for (std::size_t i = 0; i < spec.consumers.size(); ++i) {
        const auto& script = spec.consumers[i];
        auto& a = run.actors.add("C" + std::to_string(i), -1);
        a.use_token = script.token;
        a.inline_resume = script.inline_resume;
        if (script.select) {
            if (!e1 || script.inline_resume || script.gate)
                throw std::logic_error("a select consumer needs two channels and resume_on");
            a.wait_mask = 3U;
            run.actors.start(
                a, select_consume(run, a, e0.take_receiver(), e1->take_receiver(), script));
            continue;
        }
        a.channel = script.channel;
        a.wait_mask = 1U << a.channel;
        gate* g = make_gate(script.gate, a);
        on(script.channel, [&](auto& e) {
            run.actors.start(a, scheduled_if(script.via_scheduler,
                                             consume(run, a, e.take_receiver(), script, g)));
        });
    }

    run_state* r = &run;
    actor_info* h = nullptr;
    if (spec.harness_sends > 0 || spec.harness_recvs > 0) {
        h = &run.actors.harness();
        h->channel = spec.harness_channel;
        h->wait_mask = 1U << h->channel;
    }
    auto seq = std::make_shared<int>(0); // H's values are numbered in the order sent
    for (int ch = 0; ch < (two ? 2 : 1); ++ch) {
        on(ch, [&](auto& e) {
            using E = std::remove_reference_t<decltype(e)>;
            using Tx = typename E::Tx;
            using Rx = typename E::Rx;
            const std::string of = ch == 1 ? suffix_1 : std::string();
            std::vector<std::shared_ptr<held<Tx>>> spare_tx;
            std::vector<std::shared_ptr<held<Rx>>> spare_rx;
            while (e.next_tx < e.senders.size()) {
                auto spare = std::make_shared<held<Tx>>(e.take_sender());
                spare_tx.push_back(spare);
                const bool close = spec.close_spares;
                run.add_event((close ? "close" : "drop") + std::string(" tx clone") + of,
                              [spare] { return spare->connected(); },
                              [spare, close] {
                                  if (close) {
                                      spare->close();
                                  } else {
                                      spare->reset();
                                  }
                              },
                              spec.spare_at);
                run.on_cleanup([spare] { spare->reset(); });
            }
            while (e.next_rx < e.receivers.size()) {
                auto spare = std::make_shared<held<Rx>>(e.take_receiver());
                spare_rx.push_back(spare);
                if (spec.close_spare_rx) {
                    run.add_event(
                        "rx.close()" + of,
                        [r, spare, ch] {
                            return spare->alive() && !r->values.closed_by_receiver(ch);
                        },
                        [r, spare, ch] {
                            r->values.channel_closed_by_receiver(ch);
                            spare->close_channel();
                        },
                        spec.spare_at);
                } else {
                    run.add_event(
                        "drop rx clone" + of, [spare] { return spare->alive(); },
                        [spare] { spare->reset(); }, spec.spare_at);
                }
                run.on_cleanup([spare] { spare->reset(); });
            }
            if (h == nullptr || ch != spec.harness_channel) return;
            for (int k = 0; k < spec.harness_sends; ++k) {
                if constexpr (std::is_copy_constructible_v<Tx>) {
                    if (spare_tx.empty())
                        throw std::logic_error("harness sends need a spare sender");
                    auto spare = spare_tx.front();
                    run.add_event(
                        requires(Tx & t) { t.capacity(); } ? "try_send by H" : "send by H",
                        [spare] { return spare->connected(); },
                        [r, h, seq, spare] { harness_send(*r, *h, (*seq)++, **spare); },
                        spec.harness_send_at);
                } else {
                    throw std::logic_error("harness sends need an MPMC channel");
                }
            }
            for (int k = 0; k < spec.harness_recvs; ++k) {
                if (spare_rx.empty())
                    throw std::logic_error("harness receives need a spare receiver");
                auto spare = spare_rx.front();
                run.add_event(
                    "try_recv by H", [spare] { return spare->alive(); },
                    [r, h, spare] { harness_recv(*r, *h, **spare); }, spec.harness_recv_at);
            }
        });
    }
    for (int i : spec.stops) {
        actor_info* a = &run.actors[i];
        // Only while its operations carry the token: a stop after that changes nothing.
        run.add_event(
            "stop " + a->name,
            [a] { return a->alive() && a->use_token && !a->stop.stop_requested(); },
            [a] { actor_table::stop_actor(*a); }, spec.stop_at);
    }
    for (int i : spec.destroys) {
        actor_info* a = &run.actors[i];
        // While it waits in an operation, or was notified and has not run yet (a granted
        // receiver, an admitted sender; posted, or queued on the trampoline): the cases the
        // channel must undo.
        run.add_event(
            "destroy " + a->name, [a] { return actor_table::destroyable_by_event(*a); },
            [r, a] { r->actors.destroy(*a); }, spec.destroy_at);
    }
}

/// The scenario that runs `spec` on channels of kinds `Kind0<payload>` and `Kind1<payload>`
/// (support/channels.hpp: spmc_bounded, spmc_unbounded, spmc_rendezvous and the mpmc_ ones;
/// channel 1, if the spec has one, is of channel 0's kind unless said otherwise).
template <template <class> class Kind0, template <class> class Kind1 = Kind0>
scenario make_scenario(scenario_spec spec) {
    scenario s;
    s.name = spec.name;
    s.what = spec.what;
    s.depth = spec.depth;
    s.randoms = spec.randoms;
    s.setup = [spec = std::move(spec)](run_state& run) {
        build<Kind0<payload>, Kind1<payload>>(run, spec);
    };
    return s;
}

} // namespace cochan_explore
