// The ledger of a run's values and the checks made of them: the payload every scenario sends
// (tracked, so the run knows which object carries each value), a record per value of where it
// is and what became of it, the channel as the checks see it (capacity, size, connected
// endpoints), and the checks of explorer.hpp's list that concern values and waiters:
// exactly-once, FIFO per producer, no barging, strict capacity and no lost wake-up at every
// step, every waiter completed at the end. (The others: FIFO among waiters, notified once and
// a stop before linking, in actors.hpp and scripts.hpp; no leak, in run_state.hpp.)
#pragma once

#include "explore/hooks.hpp" // first: it defines COCHAN_DETAIL_INTERLEAVE

#include "explore/actors.hpp"
#include "explore/schedule.hpp"
#include "support/counted.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace cochan_explore {

using cochan_test::counted;

/// Where a value is and what became of it.
struct value_record {
    int producer = 0;
    int seq = 0;
    int channel = 0;             // the channel its producer sends on
    const void* where = nullptr; // the live object carrying the value (not a moved-from husk)
    int received = 0;
    int returned = 0;
    int destroyed = 0; // destroyed while carrying the value
    int live_rx_at_destroy = 0;
    bool send_ok = false;     // its producer saw the send succeed
    bool handed_back = false; // moved out of a coroutine frame being destroyed (a hand-back)
    std::uint64_t handed_back_at = 0; // the clock at the last such destruction
    std::uint64_t taken_at = 0;       // the clock when the receiver that kept it took it
};

/// The payload every scenario sends: a `counted` (so leaks show) tagged with a value id, and
/// tracked: the run always knows which object carries each value. Move-only. Its members
/// report to the run in progress (run_state.hpp defines them).
class payload {
  public:
    payload(int id, int value);
    payload(payload&& other) noexcept;
    payload& operator=(payload&&) = delete;
    ~payload();

    int id() const noexcept { return id_; }
    int content() const noexcept { return c_.value; }
    /// The actor that got this value accounts for it: it no longer counts as destroyed.
    int settle() noexcept;

  private:
    counted c_;
    int id_; // -1: moved from, or settled
};

/// Every value of one run, the channel as the checks see it, and the checks.
class ledger {
  public:
    ledger(run_log& log, const actor_table& actors) : log_(log), actors_(actors) {}
    ledger(const ledger&) = delete;
    ledger& operator=(const ledger&) = delete;

    // ---- the channels -----------------------------------------------------------------------

    /// A run has one or two channels (a select receives from both).
    static constexpr int max_channels = 2;

    /// Channel `ch`: bounded or not, its capacity (a bounded one of capacity 0 is a
    /// rendezvous), and how to read its buffered size.
    void observe_channel(int ch, bool bounded, std::size_t capacity,
                         std::function<std::size_t()> size) {
        auto& c = ch_[static_cast<std::size_t>(ch)];
        c.present = true;
        c.bounded = bounded;
        c.capacity = capacity;
        c.size = std::move(size);
    }
    /// The connected endpoints of each side of channel `ch` (held<E> counts them).
    int& live_senders(int ch = 0) noexcept { return ch_[static_cast<std::size_t>(ch)].live_tx; }
    int& live_receivers(int ch = 0) noexcept { return ch_[static_cast<std::size_t>(ch)].live_rx; }
    /// A receiver closed channel `ch` (`rx.close()`): no send succeeds any more.
    void channel_closed_by_receiver(int ch) { ch_[static_cast<std::size_t>(ch)].closed = true; }
    bool closed_by_receiver(int ch) const noexcept {
        return ch_[static_cast<std::size_t>(ch)].closed;
    }
    bool rendezvous(int ch) const noexcept {
        const auto& c = ch_[static_cast<std::size_t>(ch)];
        return c.bounded && c.capacity == 0;
    }
    std::size_t size(int ch) const { return ch_[static_cast<std::size_t>(ch)].size(); }
    /// No value will arrive on `ch` any more: every sender is gone, or a receiver closed it.
    bool sending_ended(int ch) const noexcept {
        const auto& c = ch_[static_cast<std::size_t>(ch)];
        return c.live_tx == 0 || c.closed;
    }
    int channel_of(int id) const {
        if (id < 0 || static_cast<std::size_t>(id) >= values_.size()) return -1;
        return values_[static_cast<std::size_t>(id)].channel;
    }

    // ---- names --------------------------------------------------------------------------------

    std::string value_name(int id) const {
        if (id < 0 || static_cast<std::size_t>(id) >= values_.size())
            return "?" + std::to_string(id);
        const auto& v = values_[static_cast<std::size_t>(id)];
        return value_name(v.producer, v.seq);
    }
    /// "P0#1": the producer's second value; the harness's values are "H#k".
    std::string value_name(int producer, int seq) const {
        const bool mine = producer == actors_.harness_producer();
        return (mine ? "H" : "P" + std::to_string(producer)) + "#" + std::to_string(seq);
    }

    // ---- what actors report -----------------------------------------------------------------

    payload new_value(const actor_info& producer, int seq) {
        values_.push_back({});
        values_.back().producer = producer.producer;
        values_.back().seq = seq;
        values_.back().channel = producer.channel;
        const int id = static_cast<int>(values_.size()) - 1;
        return {id, 1000 * producer.producer + seq};
    }

    void sent(const actor_info& producer, int id) {
        values_[static_cast<std::size_t>(id)].send_ok = true;
        if (log_.verbose()) log_.note(producer.name + ": sent " + value_name(id));
    }

    /// `id` was accepted by a try_send while the sends of `waiting` waited.
    void accepted_by_try_send(int id, const std::vector<int>& waiting) {
        for (int w : waiting) barging_pairs_.emplace_back(w, id);
    }

    /// A failed send handed the value back: it must be the value that was sent.
    void returned(const actor_info& producer, payload& p, int expected, const char* why) {
        kept(producer, p, expected, why);
        const int id = p.settle();
        if (id >= 0) ++values_[static_cast<std::size_t>(id)].returned;
    }

    /// A send handed the value back (failed, cancelled, or a full try_send): it must be the
    /// very value that was sent, intact.
    void kept(const actor_info& producer, const payload& p, int expected, const char* why) {
        if (p.id() != expected) {
            log_.fail(producer.name + ": " + why + " handed back " + value_name(p.id()) +
                      " instead of " + value_name(expected));
        } else if (p.content() != expected_content(expected)) {
            log_.fail(producer.name + ": " + why + " handed back " + value_name(expected) +
                      " altered");
        }
        if (log_.verbose()) {
            log_.note(producer.name + ": " + why + ", " + value_name(expected) + " back");
        }
    }

    void received(actor_info& consumer, payload& p, std::uint64_t taken_at) {
        const int id = p.id();
        if (id < 0 || static_cast<std::size_t>(id) >= values_.size()) {
            log_.fail(consumer.name + " received a moved-from or settled value");
            return;
        }
        if (p.content() != expected_content(id)) {
            log_.fail(consumer.name + " received " + value_name(id) + " with altered content");
        }
        auto& v = values_[static_cast<std::size_t>(id)];
        p.settle();
        ++v.received;
        v.taken_at = taken_at;
        if (log_.verbose()) log_.note(consumer.name + ": received " + value_name(id));
        const auto producers = static_cast<std::size_t>(actors_.producers());
        if (consumer.last_seq.size() < producers) consumer.last_seq.resize(producers, -1);
        int& last = consumer.last_seq[static_cast<std::size_t>(v.producer)];
        if (v.seq <= last && !v.handed_back) {
            log_.fail(consumer.name + " received " + value_name(id) + " after " +
                      value_name(v.producer, last) + " (FIFO)");
        }
        last = std::max(last, v.seq);
    }

    /// A receive (a select: over the channels of `consumer.wait_mask`) saw `disconnected`:
    /// on each channel every sender is gone or a receiver closed it, and nothing is buffered (a
    /// value handed back by a destroyed receiver may arrive later: docs/design.md, known limits).
    void saw_disconnected(const actor_info& consumer) {
        if (log_.verbose()) log_.note(consumer.name + ": disconnected");
        for (int ch = 0; ch < max_channels; ++ch) {
            if ((consumer.wait_mask & (1U << ch)) == 0) continue;
            const auto& c = ch_[static_cast<std::size_t>(ch)];
            const std::string where = " on channel " + std::to_string(ch);
            if (!sending_ended(ch)) {
                log_.fail(consumer.name + " saw disconnected while " + std::to_string(c.live_tx) +
                          " sender(s) remain" + where);
            }
            if (!any_handed_back_ && c.size() != 0) {
                log_.fail(consumer.name + " saw disconnected with " + std::to_string(c.size()) +
                          " value(s) buffered" + where);
            }
        }
    }

    /// A send on a rendezvous channel succeeded: a receiver has the value (granted to it, or
    /// received already), it is not buffered.
    void check_handed_to_receiver(const actor_info& producer, int id) {
        const auto& v = values_[static_cast<std::size_t>(id)];
        if (v.received != 0 || v.handed_back) return;
        for (const auto& a : actors_.all()) {
            if (a.producer < 0 && a.contains(v.where)) return;
        }
        log_.fail(producer.name + "'s send of " + value_name(id) + " on a rendezvous channel " +
                  "succeeded, but no receiver has the value");
    }

    // ---- what payloads report (run_state.hpp) -----------------------------------------------

    void value_created(int id, const payload* p) {
        values_[static_cast<std::size_t>(id)].where = p;
    }
    void value_moved(int id, const payload* from, const payload* to) {
        auto& v = values_[static_cast<std::size_t>(id)];
        v.where = to;
        if (const auto at = actors_.dying_since(from)) {
            // Out of a frame being destroyed: a granted receiver handing its value back.
            // Known limit: such a value may come after newer ones.
            v.handed_back = true;
            v.handed_back_at = *at;
            any_handed_back_ = true;
        }
    }
    void value_destroyed(int id) {
        auto& v = values_[static_cast<std::size_t>(id)];
        v.where = nullptr;
        ++v.destroyed;
        v.live_rx_at_destroy = ch_[static_cast<std::size_t>(v.channel)].live_rx;
        if (log_.verbose()) {
            log_.note("destroyed " + value_name(id) + " (" + std::to_string(v.live_rx_at_destroy) +
                      " receiver(s) left)");
        }
    }
    void value_settled(int id) { values_[static_cast<std::size_t>(id)].where = nullptr; }

    // ---- the checks -------------------------------------------------------------------------

    /// The invariants that hold between any two steps, on every channel.
    void check_step() {
        std::array<std::size_t, max_channels> buffered{};
        std::array<std::size_t, max_channels> granted{};
        std::vector<int> held_by(actors_.all().size(), 0); // granted values each consumer holds
        for (const auto& value : values_) {
            const void* w = value.where;
            if (w == nullptr) continue;
            const actor_info* holder = nullptr;
            for (const auto& a : actors_.all()) {
                if (a.contains(w)) holder = &a;
            }
            const auto ch = static_cast<std::size_t>(value.channel);
            if (holder == nullptr) {
                ++buffered[ch]; // neither in a producer's hands nor in a consumer's: in the buffer
            } else if (holder->awaiting_recv) {
                ++granted[ch]; // in the receive slot of a consumer that has not taken it yet
                ++held_by[static_cast<std::size_t>(holder->index)];
            }
        }
        for (const auto& a : actors_.all()) {
            // One receive (or select) takes one value: a second one in its frame was granted
            // to a branch that lost its select.
            if (held_by[static_cast<std::size_t>(a.index)] > 1) {
                log_.fail(a.name + " holds " +
                          std::to_string(held_by[static_cast<std::size_t>(a.index)]) +
                          " granted values (a select's losing branch kept one)");
            }
        }
        for (int i = 0; i < max_channels; ++i) {
            const auto ch = static_cast<std::size_t>(i);
            const auto& c = ch_[ch];
            if (!c.present) continue;
            const std::string where = max_channels > 1 && ch_[1].present
                                          ? " on channel " + std::to_string(i)
                                          : std::string();
            const std::size_t size = c.size();
            if (rendezvous(i)) {
                // No cell: a value is never buffered (one handed back by a destroyed receiver
                // waits outside the capacity, where size() does not count it).
                if (size != 0)
                    log_.fail("a rendezvous channel's size() is " + std::to_string(size));
                if (buffered[ch] != 0 && !any_handed_back_) {
                    log_.fail(std::to_string(buffered[ch]) +
                              " value(s) buffered in a rendezvous channel" + where);
                }
            } else if (size != buffered[ch]) {
                log_.fail("size() is " + std::to_string(size) + " but " +
                          std::to_string(buffered[ch]) + " value(s) are buffered" + where);
            } else if (c.bounded && buffered[ch] + granted[ch] > c.capacity) {
                log_.fail("capacity " + std::to_string(c.capacity) +
                          " exceeded: " + std::to_string(buffered[ch]) + " buffered + " +
                          std::to_string(granted[ch]) + " granted" + where);
            }
        }
        for (const auto& a : actors_.all()) {
            if (a.state == actor_state::running || a.state == actor_state::linking) {
                log_.fail(a.name + " is neither suspended nor finished between two steps");
            } else if (a.state == actor_state::notified) {
                log_.fail(a.name +
                          " was woken but is left queued on the trampoline (lost wake-up)");
            }
            if (a.state != actor_state::in_op) continue;
            if (!a.linked()) {
                log_.fail(a.name + "'s " + actors_.doing(a) + " completed but it was never " +
                          "notified (lost wake-up)");
                continue;
            }
            if (a.gate_op) continue;
            if (a.awaiting_recv) {
                bool ended = true;
                for (int i = 0; i < max_channels; ++i) {
                    if ((a.wait_mask & (1U << i)) == 0) continue;
                    const auto ch = static_cast<std::size_t>(i);
                    if (buffered[ch] != 0) {
                        log_.fail(a.name + " waits to receive while " +
                                  std::to_string(buffered[ch]) + " value(s) are buffered on " +
                                  "channel " + std::to_string(i) + " (lost wake-up)");
                    }
                    if (rendezvous(i) && actors_.waiting_on(i, false) != 0) {
                        log_.fail(a.name +
                                  " waits to receive while a send waits on rendezvous "
                                  "channel " +
                                  std::to_string(i) + " (lost wake-up)");
                    }
                    if (!sending_ended(i)) ended = false;
                }
                if (ended) {
                    log_.fail(a.name + " waits to receive with no sender left (or its channel " +
                              "closed by a receiver)");
                }
            } else {
                const int i = a.channel;
                const auto ch = static_cast<std::size_t>(i);
                const auto& c = ch_[ch];
                if (c.bounded && c.capacity != 0 && buffered[ch] + granted[ch] < c.capacity) {
                    log_.fail(a.name + " waits to send while a slot is free (lost wake-up)");
                }
                if (c.live_rx == 0) log_.fail(a.name + " waits to send with no receiver left");
                if (c.closed) log_.fail(a.name + " waits to send on a channel a receiver closed");
            }
        }
    }

    /// Once nothing can run: every actor finished, and every value met exactly one fate.
    void check_end() {
        for (const auto& a : actors_.all()) {
            if (a.alive())
                log_.fail(a.name + " never completed (left in " + actors_.doing(a) + ")");
        }
        std::vector<std::vector<const value_record*>> by_producer(
            static_cast<std::size_t>(actors_.producers()));
        for (std::size_t id = 0; id < values_.size(); ++id) {
            const auto& v = values_[id];
            const std::string name = value_name(static_cast<int>(id));
            const int fates = v.received + v.returned + v.destroyed;
            if (fates != 1) {
                log_.fail(name + ": received " + std::to_string(v.received) + ", returned " +
                          std::to_string(v.returned) + ", destroyed " +
                          std::to_string(v.destroyed) + " (each value must meet exactly one fate)");
            }
            if (v.destroyed != 0 && v.send_ok && v.live_rx_at_destroy != 0) {
                log_.fail(name + " was sent, then destroyed while " +
                          std::to_string(v.live_rx_at_destroy) + " receiver(s) remained (lost)");
            }
            const auto& producer = actors_.producer(v.producer);
            if (v.destroyed != 0 && !v.send_ok && producer.state == actor_state::finished) {
                log_.fail(name + " was destroyed although its producer never saw its send succeed");
            }
            if (v.received != 0) by_producer[static_cast<std::size_t>(v.producer)].push_back(&v);
        }
        // FIFO per producer, in the order the channel gave values out. The one exception is a
        // value handed back by a destroyed receiver: it goes back to the head, so it comes after
        // the values taken before the hand-back, and several handed back come out in the order
        // of the hand-backs (docs/design.md, known limits).
        for (const auto& seq : by_producer) {
            for (const value_record* u : seq) {
                for (const value_record* v : seq) {
                    if (u->seq >= v->seq || u->taken_at < v->taken_at) continue;
                    const bool taken_before_hand_back =
                        u->handed_back && v->taken_at < u->handed_back_at;
                    const bool handed_back_later =
                        u->handed_back && v->handed_back && v->handed_back_at > u->handed_back_at;
                    if (!taken_before_hand_back && !handed_back_later) {
                        log_.fail("the channel gave out " + value_name(v->producer, v->seq) +
                                  " before " + value_name(u->producer, u->seq) + " (FIFO)");
                    }
                }
            }
        }
        // No barging (docs/contract.md, rule 2): a value a try_send got in while a send waited
        // leaves the channel after that send's value (both received, neither handed back).
        for (const auto& [w, t] : barging_pairs_) {
            const auto& vw = values_[static_cast<std::size_t>(w)];
            const auto& vt = values_[static_cast<std::size_t>(t)];
            if (vw.received == 0 || vt.received == 0 || vw.handed_back || vt.handed_back) continue;
            if (vt.taken_at < vw.taken_at) {
                log_.fail(value_name(t) + ", accepted by a try_send while the send of " +
                          value_name(w) + " waited, left the channel first (barging past a " +
                          "waiting send)");
            }
        }
    }

  private:
    struct channel_view {
        bool present = false;
        bool bounded = false;
        std::size_t capacity = 0; // bounded: 0 is a rendezvous
        std::function<std::size_t()> size = [] { return std::size_t{0}; };
        int live_tx = 0;
        int live_rx = 0;
        bool closed = false; // a receiver closed it
    };

    int expected_content(int id) const {
        const auto& v = values_[static_cast<std::size_t>(id)];
        return 1000 * v.producer + v.seq;
    }

    run_log& log_;
    const actor_table& actors_;
    std::array<channel_view, max_channels> ch_{};
    std::vector<value_record> values_;
    std::vector<std::pair<int, int>> barging_pairs_; // (waiting send's value, try_send's value)
    bool any_handed_back_ = false;
};

} // namespace cochan_explore
