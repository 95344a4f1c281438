// Building a scenario from its spec: scenario_spec (the channel's kind is a template argument;
// its capacity, the producers' and consumers' scripts, the endpoints the harness holds, and
// the events the explorer may inject, each between steps and/or at the hook points of its
// `*_at` mask), build<Kind>() that sets one run up from it, and make_scenario<Kind>() that
// turns a spec into a scenario.
#pragma once

#include "explore/hooks.hpp" // first: it defines COCHAN_DETAIL_INTERLEAVE

#include <cochan/cochan.hpp>

#include "explore/actors.hpp"
#include "explore/ledger.hpp"
#include "explore/run_state.hpp"
#include "explore/scripts.hpp"

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace cochan_explore {

/// The depth bound of a scenario with none: the DFS enumerates every schedule of the scenario
/// (none is that long; `explore()` reports whether one was).
inline constexpr std::size_t no_depth_bound = 1000;

/// A channel scenario: its name and what it exercises, the channel (its kind is make_scenario's
/// template argument), producers, consumers, the events the explorer may inject, each between
/// steps (at::step) and/or at the hook points of its `*_at` mask, and how far to explore it.
/// An aggregate, written with designated initializers (in this order); what a scenario leaves
/// out keeps its default: none of that kind of event, capacity 1, no depth bound. Actors are
/// numbered producers first, then consumers. Each member has a default initializer, if only
/// `{}`: GCC's -Wmissing-field-initializers stays quiet only for those when a designated
/// initializer leaves a member out.
struct scenario_spec {
    std::string name{};
    std::string what{}; // one line: what it exercises (cochan_explore --list)
    std::size_t capacity = 1;
    std::vector<producer_script> producers{};
    std::vector<consumer_script> consumers{};
    int spare_receivers = 0;   // receiver clones the harness holds; an event drops each
    int spare_senders = 0;     // (MPMC) sender clones the harness holds; an event ends each
    bool close_spares = false; // the spare senders' event is close() (else: drop)
    where_mask spare_at = at::step;
    std::vector<int> stops{}; // actors (producers first, then consumers) an event may stop
    where_mask stop_at = at::step;
    std::vector<int> destroys{}; // actors an event may destroy while suspended
    where_mask destroy_at = at::step;
    int harness_sends = 0; // events: the harness try_sends (send, unbounded) a value of its own
                           // through the first spare sender
    where_mask harness_send_at = at::step;
    int harness_recvs = 0; // events: the harness try_recvs through the first spare receiver
    where_mask harness_recv_at = at::step;
    std::size_t depth = no_depth_bound; // DFS bound
    std::size_t randoms = 0;            // random schedules after the DFS (if it was bounded)
};

/// Sets up one run of `spec` on a channel of kind `Kind` (support/channels.hpp).
template <class Kind> void build(run_state& run, const scenario_spec& spec) {
    auto channel = Kind::make(spec.capacity);
    auto& tx = channel.first;
    auto& rx = channel.second;
    using Tx = std::remove_reference_t<decltype(tx)>;
    using Rx = std::remove_reference_t<decltype(rx)>;

    // The harness keeps its own reference to the queue (not an endpoint: it changes nothing the
    // channel's logic sees) so size() can be read until the run ends.
    // An operation source holds a counted queue reference; released at the end of the run.
    auto* source = new auto(make_op_source(rx));
    run.observe_channel(
        Kind::bounded ? spec.capacity : 0, [source] { return source->queue->size(); },
        [source] { delete source; });

    std::vector<held<Tx>> senders;
    std::vector<held<Rx>> receivers;
    const std::size_t n_tx = spec.producers.size() + static_cast<std::size_t>(spec.spare_senders);
    const std::size_t n_rx = spec.consumers.size() + static_cast<std::size_t>(spec.spare_receivers);
    if constexpr (std::is_copy_constructible_v<Tx>) {
        for (std::size_t i = 1; i < n_tx; ++i) senders.emplace_back(tx, run.values.live_senders());
    }
    senders.emplace_back(std::move(tx), run.values.live_senders());
    for (std::size_t i = 1; i < n_rx; ++i) receivers.emplace_back(rx, run.values.live_receivers());
    receivers.emplace_back(std::move(rx), run.values.live_receivers());

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
        auto& a = run.actors.add("P" + std::to_string(i), static_cast<int>(i));
        a.use_token = spec.producers[i].token; // from the start: a stop may come before it runs
        a.inline_resume = spec.producers[i].inline_resume;
        gate* g = make_gate(spec.producers[i].gate, a);
        run.actors.start(a, produce(run, a, std::move(senders[i]), spec.producers[i], g));
    }
    for (std::size_t i = 0; i < spec.consumers.size(); ++i) {
        auto& a = run.actors.add("C" + std::to_string(i), -1);
        a.use_token = spec.consumers[i].token;
        a.inline_resume = spec.consumers[i].inline_resume;
        gate* g = make_gate(spec.consumers[i].gate, a);
        run.actors.start(a, consume(run, a, std::move(receivers[i]), spec.consumers[i], g));
    }
    std::vector<std::shared_ptr<held<Tx>>> spare_tx;
    std::vector<std::shared_ptr<held<Rx>>> spare_rx;
    for (std::size_t i = spec.producers.size(); i < senders.size(); ++i) {
        auto spare = std::make_shared<held<Tx>>(std::move(senders[i]));
        spare_tx.push_back(spare);
        const bool close = spec.close_spares;
        run.add_event((close ? "close" : "drop") + std::string(" tx clone"),
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
    for (std::size_t i = spec.consumers.size(); i < receivers.size(); ++i) {
        auto spare = std::make_shared<held<Rx>>(std::move(receivers[i]));
        spare_rx.push_back(spare);
        run.add_event(
            "drop rx clone", [spare] { return spare->alive(); }, [spare] { spare->reset(); },
            spec.spare_at);
        run.on_cleanup([spare] { spare->reset(); });
    }
    run_state* r = &run;
    if (spec.harness_sends > 0 || spec.harness_recvs > 0) {
        actor_info* h = &run.actors.harness();
        auto seq = std::make_shared<int>(0); // H's values are numbered in the order sent
        for (int k = 0; k < spec.harness_sends; ++k) {
            if constexpr (std::is_copy_constructible_v<Tx>) {
                if (spare_tx.empty()) throw std::logic_error("harness sends need a spare sender");
                auto spare = spare_tx.front();
                run.add_event(
                    Kind::bounded ? "try_send by H" : "send by H",
                    [spare] { return spare->connected(); },
                    [r, h, seq, spare] { harness_send(*r, *h, (*seq)++, **spare); },
                    spec.harness_send_at);
            } else {
                throw std::logic_error("harness sends need an MPMC channel");
            }
        }
        for (int k = 0; k < spec.harness_recvs; ++k) {
            if (spare_rx.empty()) throw std::logic_error("harness receives need a spare receiver");
            auto spare = spare_rx.front();
            run.add_event(
                "try_recv by H", [spare] { return spare->alive(); },
                [r, h, spare] { harness_recv(*r, *h, **spare); }, spec.harness_recv_at);
        }
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

/// The scenario that runs `spec` on a channel of kind `Kind<payload>` (support/channels.hpp:
/// spmc_bounded, spmc_unbounded, mpmc_bounded, mpmc_unbounded).
template <template <class> class Kind> scenario make_scenario(scenario_spec spec) {
    scenario s;
    s.name = spec.name;
    s.what = spec.what;
    s.depth = spec.depth;
    s.randoms = spec.randoms;
    s.setup = [spec = std::move(spec)](run_state& run) { build<Kind<payload>>(run, spec); };
    return s;
}

} // namespace cochan_explore
