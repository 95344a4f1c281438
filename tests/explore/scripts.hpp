// What the actors do: the scripts of a producer and a consumer (and the helpers scenarios
// write them with), the coroutines that play them on a channel and report every result to the
// run, the events by which the harness itself sends and receives, the endpoints actors and the
// harness hold (counted, so the checks know how many remain), and the gate an actor may wait
// at first so that it runs inside the trampoline.
#pragma once

#include "explore/hooks.hpp" // first: it defines COCHAN_DETAIL_INTERLEAVE

#include <cochan/cochan.hpp>

#include "explore/actors.hpp"
#include "explore/ledger.hpp"
#include "explore/run_state.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace cochan_explore {

// ---- endpoints --------------------------------------------------------------------------------

/// An endpoint owned by an actor or by the harness. Counts the connected endpoints of its side
/// so the checks know how many remain; the count drops before the endpoint is destroyed, so a
/// value the last receiver's departure destroys sees zero receivers.
template <class E> class held {
  public:
    held(E e, int& live) : e_(std::move(e)), live_(&live) { ++live; }
    held(held&& other) noexcept
        : e_(std::move(other.e_)), live_(other.live_), alive_(std::exchange(other.alive_, false)),
          connected_(std::exchange(other.connected_, false)) {}
    held& operator=(held&&) = delete;
    ~held() { reset(); }

    E& operator*() noexcept { return e_; }
    E* operator->() noexcept { return &e_; }
    bool alive() const noexcept { return alive_; }
    bool connected() const noexcept { return connected_; }

    void close() noexcept {
        disconnect();
        e_.close();
    }
    /// A receiver closes the channel for sending (`rx.close()`); it stays connected.
    void close_channel() noexcept { e_.close(); }
    void reset() noexcept {
        disconnect();
        if (alive_) {
            alive_ = false;
            E gone(std::move(e_)); // a moved-from endpoint is inert
        }
    }

  private:
    void disconnect() noexcept {
        if (connected_) {
            connected_ = false;
            --*live_;
        }
    }
    E e_;
    int* live_;
    bool alive_ = true;
    bool connected_ = true;
};

/// Another channel an actor waits on (inline) before its first operation. The "kick" event
/// sends to it: the actor then resumes through the trampoline, as a coroutine woken by some
/// other channel does, so what it does runs inside the trampoline and every coroutine it wakes
/// is queued there.
struct gate {
    using channel = decltype(cochan::spmc::unbounded<int>());
    explicit gate(channel c) : tx(std::move(c.first)), rx(std::move(c.second)) {}
    std::optional<cochan::spmc::unbounded_sender<int>> tx;
    std::optional<cochan::spmc::unbounded_receiver<int>> rx;
};

// ---- scripts ------------------------------------------------------------------------------------

struct producer_script {
    int values = 2;
    bool try_first = false;     // bounded: try_send first, co_await send if it is full
    bool token = false;         // sends carry the actor's stop token until one is cancelled
    int close_after = -1;       // close() after this many values, then send once more (must fail)
    bool close_at_end = false;  // close() before finishing (else the endpoint is just dropped)
    bool inline_resume = false; // sends resume inline (default resumption), not via resume_on
    bool via_scheduler = false; // no resume_on: the actor's promise names the explorer's queue
    bool gate = false;          // wait at a gate first, until the "kick" event (inline)
    int channel = 0;            // the channel it sends on (0, or 1 in a two-channel scenario)
};

struct consumer_script {
    bool try_first = false;     // try_recv first, co_await recv if it is empty
    bool token = false;         // receives carry the actor's stop token until one is cancelled
    int leave_after = -1;       // drop the receiver after this many values (-1: until disconnected)
    bool inline_resume = false; // receives resume inline (default resumption)
    bool via_scheduler = false; // no resume_on: the actor's promise names the explorer's queue
    bool gate = false;          // wait at a gate first, until the "kick" event (inline)
    int destroy_on_disconnect = -1; // on `disconnected`, destroy this actor if it is suspended
    int channel = 0;                // the channel it receives from
    bool select = false; // receives through cochan::select over channels 0 and 1 (resume_on),
                         // try_select first if try_first; `channel` is then ignored
};

// The helpers scenarios write scripts with: `with_token(trying(producer(3)))`.
inline producer_script producer(int values) {
    producer_script p;
    p.values = values;
    return p;
}
inline consumer_script consumer() {
    return {};
}
inline producer_script with_token(producer_script p) {
    p.token = true;
    return p;
}
inline consumer_script with_token(consumer_script c) {
    c.token = true;
    return c;
}
inline producer_script trying(producer_script p) {
    p.try_first = true;
    return p;
}
inline consumer_script trying(consumer_script c) {
    c.try_first = true;
    return c;
}
inline producer_script closing_after(producer_script p, int k) {
    p.close_after = k;
    return p;
}
inline producer_script closing_at_end(producer_script p) {
    p.close_at_end = true;
    return p;
}
inline consumer_script leaving_after(consumer_script c, int k) {
    c.leave_after = k;
    return c;
}
// Default (inline) resumption: no resume_on; woken inside the completing operation.
inline producer_script resuming_inline(producer_script p) {
    p.inline_resume = true;
    return p;
}
inline consumer_script resuming_inline(consumer_script c) {
    c.inline_resume = true;
    return c;
}
// Default resumption through a scheduler the actor's promise names (cochan/scheduler.hpp): woken,
// it is handed to the explorer's queue, as with resume_on, by a different path.
inline producer_script scheduled(producer_script p) {
    p.via_scheduler = true;
    return p;
}
inline consumer_script scheduled(consumer_script c) {
    c.via_scheduler = true;
    return c;
}
// Waits at a gate first: the "kick" event wakes it inline, so it runs inside the trampoline.
inline producer_script gated(producer_script p) {
    p.gate = true;
    return p;
}
inline consumer_script gated(consumer_script c) {
    c.gate = true;
    return c;
}
inline consumer_script destroying_on_disconnect(consumer_script c, int actor) {
    c.destroy_on_disconnect = actor;
    return c;
}
// Sends on, or receives from, channel `ch` of a two-channel scenario.
inline producer_script on_channel(producer_script p, int ch) {
    p.channel = ch;
    return p;
}
inline consumer_script on_channel(consumer_script c, int ch) {
    c.channel = ch;
    return c;
}
// Receives through `cochan::select(rx0, rx1)` (with its token, if with_token; `try_select`
// first, if trying).
inline consumer_script selecting(consumer_script c) {
    c.select = true;
    return c;
}

// ---- the coroutines that play them ------------------------------------------------------------

/// Waits at `g` (inline) until the kick event sends to it; the caller then runs inside the
/// trampoline. A macro, because a `co_await` cannot move into a helper function.
#define COCHAN_EXPLORE_PASS_GATE(run, self, g)                                                     \
    if ((g) != nullptr) {                                                                          \
        (run).actors.begin_op(self, "gate", -1, false, true);                                      \
        auto gate_op = (g)->rx->recv();                                                            \
        const auto gate_r = co_await (run).actors.track(self, gate_op);                            \
        (run).actors.end_op(self);                                                                 \
        if (!gate_r) (run).log.fail((self).name + ": its gate failed");                            \
        (run).log.note((self).name + ": through its gate");                                        \
    }

/// Sends `script.values` values, retrying one whose send was cancelled, stopping at the first
/// send that fails with `disconnected`.
template <class Tx>
actor_task produce(run_state& run, actor_info& self, held<Tx> tx, producer_script script, gate* g) {
    constexpr bool bounded = requires {
        tx->capacity();
    };
    COCHAN_EXPLORE_PASS_GATE(run, self, g)
    bool closed = false;
    bool stopped = false;
    for (int seq = 0; seq < script.values && !stopped; ++seq) {
        if (seq > 0) co_await run.actors.yield(self);
        if (seq == script.close_after) {
            run.log.note(self.name + ": close");
            tx.close();
            closed = true;
        }
        std::optional<payload> v;
        v.emplace(run.values.new_value(self, seq));
        const int id = v->id();
        bool may_try = script.try_first;
        for (;;) {
            std::optional<cochan::send_result<payload>> r;
            if constexpr (bounded) {
                if (may_try) {
                    may_try = false;
                    self.op = "try_send";
                    self.op_value = id;
                    const auto waiting = run.actors.waiting_sends(self.channel);
                    const int receivers_waiting = run.actors.waiting_on(self.channel, true);
                    r.emplace(tx->try_send(std::move(*v)));
                    if (*r) run.values.accepted_by_try_send(id, waiting);
                    if (!*r && r->error().reason == cochan::send_errc::full &&
                        run.values.rendezvous(self.channel) && receivers_waiting != 0) {
                        run.log.fail(self.name + ": try_send on a rendezvous channel was full "
                                                 "while a receiver waited");
                    }
                    if (!*r && r->error().reason == cochan::send_errc::full) {
                        run.values.kept(self, r->error().value, id, "try_send full");
                        v.emplace(std::move(r->error().value));
                        continue; // now wait for a slot
                    }
                } else {
                    cochan::default_stop_token token;
                    if (self.use_token) token = self.stop.get_token();
                    run.actors.begin_op(self, "send", id, false);
                    const bool stopped_before = token.stop_requested();
                    if (script.inline_resume || script.via_scheduler) {
                        auto op = tx->send(std::move(*v), token);
                        r.emplace(co_await run.actors.track(self, op));
                    } else {
                        auto op = tx->send(std::move(*v), token).resume_on(run.actors.executor());
                        r.emplace(co_await run.actors.track(self, op));
                    }
                    if (*r && run.actors.notified(self)) run.actors.check_granted_in_order(self);
                    const bool cancelled = !*r && r->error().reason == cochan::send_errc::cancelled;
                    if (stopped_before && !cancelled) {
                        run.log.fail(self.name + ": a send with a stopped token was not cancelled");
                    }
                    if (self.stopped_before_link && (!cancelled || self.op_suspended)) {
                        run.log.fail(self.name + ": a stop that landed before the send linked did "
                                                 "not cancel it at once");
                    }
                    run.actors.end_op(self);
                }
            } else {
                self.op = "send";
                self.op_value = id;
                r.emplace(tx->send(std::move(*v)));
            }
            if (*r) {
                if (closed) run.log.fail(self.name + ": a send through a closed sender succeeded");
                run.values.sent(self, id);
                if (run.values.rendezvous(self.channel))
                    run.values.check_handed_to_receiver(self, id);
                break;
            }
            if (r->error().reason == cochan::send_errc::cancelled) {
                run.actors.saw_cancelled(self);
                run.values.kept(self, r->error().value, id, "send cancelled");
                v.emplace(std::move(r->error().value));
                co_await run.actors.yield(self);
                continue; // retry the same value, without a token
            }
            if (r->error().reason != cochan::send_errc::disconnected) {
                run.log.fail(self.name + ": unexpected send error");
            } else if (!closed && run.values.live_receivers(self.channel) != 0 &&
                       !run.values.closed_by_receiver(self.channel)) {
                run.log.fail(self.name + ": send failed with disconnected while receivers remain");
            }
            run.values.returned(self, r->error().value, id, "disconnected");
            stopped = true;
            break;
        }
    }
    if (script.close_at_end && !closed) {
        run.log.note(self.name + ": close");
        tx.close();
    }
    self.op = "finishing";
    self.op_value = -1;
    tx.reset();
}

/// Receives until `disconnected` (or `script.leave_after` values), then drops its receiver.
template <class Rx>
actor_task consume(run_state& run, actor_info& self, held<Rx> rx, consumer_script script, gate* g) {
    COCHAN_EXPLORE_PASS_GATE(run, self, g)
    int got = 0;
    bool first = true;
    for (;;) {
        if (got == script.leave_after) break;
        if (!first) co_await run.actors.yield(self);
        first = false;
        if (script.try_first) {
            self.op = "try_recv";
            self.op_value = -1;
            const int senders_waiting = run.actors.waiting_on(self.channel, false);
            auto r = rx->try_recv();
            if (!r && r.error() == cochan::recv_errc::empty &&
                run.values.rendezvous(self.channel) && senders_waiting != 0) {
                run.log.fail(self.name + ": try_recv on a rendezvous channel was empty while a "
                                         "send waited");
            }
            if (r) {
                run.values.received(self, *r, run.log.tick());
                ++got;
                continue;
            }
            if (r.error() == cochan::recv_errc::disconnected) {
                run.values.saw_disconnected(self);
                break;
            }
            if (r.error() != cochan::recv_errc::empty) run.log.fail(self.name + ": try_recv error");
        }
        cochan::default_stop_token token;
        if (self.use_token) token = self.stop.get_token();
        run.actors.begin_op(self, "recv", -1, true);
        const bool stopped_before = token.stop_requested();
        std::optional<cochan::recv_result<payload>> r;
        if (script.inline_resume || script.via_scheduler) {
            auto op = rx->recv(token);
            r.emplace(co_await run.actors.track(self, op));
        } else {
            auto op = rx->recv(token).resume_on(run.actors.executor());
            r.emplace(co_await run.actors.track(self, op));
        }
        if (*r && run.actors.notified(self)) run.actors.check_granted_in_order(self);
        const bool cancelled = !*r && r->error() == cochan::recv_errc::cancelled;
        if (stopped_before && !cancelled) {
            // Decision (docs/design.md): a stopped token cancels even if a value is there.
            run.log.fail(self.name + ": a receive with a stopped token was not cancelled");
        }
        if (self.stopped_before_link && (!cancelled || self.op_suspended)) {
            run.log.fail(
                self.name +
                ": a stop that landed before the receive linked did not cancel it at once");
        }
        const std::uint64_t taken_at = run.actors.end_op(self);
        if (*r) {
            run.values.received(self, **r, taken_at);
            ++got;
        } else if (cancelled) {
            run.actors.saw_cancelled(self);
        } else {
            if (r->error() != cochan::recv_errc::disconnected) {
                run.log.fail(self.name + ": unexpected recv error");
            }
            run.values.saw_disconnected(self);
            if (script.destroy_on_disconnect >= 0) {
                run.actors.destroy_by(self, script.destroy_on_disconnect);
            }
            break;
        }
    }
    self.op = "finishing";
    self.op_value = -1;
    rx.reset();
}

/// Receives through `cochan::select(rx0, rx1)` (resumed through the explorer's executor) until
/// `disconnected` (or `script.leave_after` values), then drops both receivers. Beyond the
/// consumer's checks: the value came from the channel its index names; a select that finds
/// values on both channels without waiting takes channel 0's (bias); one that finds a value
/// does not wait.
template <class Rx0, class Rx1>
actor_task select_consume(run_state& run, actor_info& self, held<Rx0> rx0, held<Rx1> rx1,
                          consumer_script script) {
    constexpr unsigned both = 3;
    int got = 0;
    bool first = true;
    auto take = [&](auto& result, std::uint64_t taken_at) {
        const int index = static_cast<int>(result->index());
        payload& p = index == 0 ? std::get<0>(*result) : std::get<1>(*result);
        if (run.values.channel_of(p.id()) != index) {
            run.log.fail(self.name + ": select's branch " + std::to_string(index) + " returned " +
                         run.values.value_name(p.id()) + " of channel " +
                         std::to_string(run.values.channel_of(p.id())));
        }
        run.values.received(self, p, taken_at);
        return index;
    };
    for (;;) {
        if (got == script.leave_after) break;
        if (!first) co_await run.actors.yield(self);
        first = false;
        if (script.try_first) {
            self.op = "try_select";
            self.op_value = -1;
            self.wait_mask = both;
            const bool had0 = run.values.size(0) != 0;
            auto r = cochan::try_select(*rx0, *rx1);
            if (r) {
                if (take(r, run.log.tick()) != 0 && had0)
                    run.log.fail(self.name + ": try_select took channel 1's value before 0's");
                ++got;
                continue;
            }
            if (r.error() == cochan::recv_errc::disconnected) {
                run.values.saw_disconnected(self);
                break;
            }
            if (r.error() != cochan::recv_errc::empty) {
                run.log.fail(self.name + ": try_select error");
            } else if (run.values.size(0) + run.values.size(1) != 0) {
                run.log.fail(self.name + ": try_select said empty with values buffered");
            }
        }
        cochan::default_stop_token token;
        if (self.use_token) token = self.stop.get_token();
        run.actors.begin_op(self, "select", -1, true, false, both);
        const bool stopped_before = token.stop_requested();
        const std::uint64_t events_before = run.events_fired();
        const std::size_t buffered0 = run.values.size(0);
        const std::size_t buffered1 = run.values.size(1);
        std::optional<cochan::recv_result<std::variant<payload, payload>>> r;
        {
            auto op = cochan::select(token, *rx0, *rx1).resume_on(run.actors.executor());
            r.emplace(co_await run.actors.track_select(self, op));
        }
        const bool cancelled = !*r && r->error() == cochan::recv_errc::cancelled;
        if (stopped_before && !cancelled) {
            run.log.fail(self.name + ": a select with a stopped token was not cancelled");
        }
        if (self.stopped_before_link && self.op_suspended) {
            run.log.fail(self.name + ": a stop that landed while the select linked its branches "
                                     "did not complete it at once");
        }
        const bool undisturbed = run.events_fired() == events_before && !stopped_before;
        if (undisturbed && buffered0 + buffered1 != 0 && self.op_suspended) {
            run.log.fail(self.name + ": select waited although a value was buffered");
        }
        const bool notified = run.actors.notified(self);
        const std::uint64_t taken_at = run.actors.end_op(self);
        if (*r) {
            const int index = take(*r, taken_at);
            if (undisturbed && !self.op_suspended && index != 0 && buffered0 != 0)
                run.log.fail(self.name + ": select took channel 1's value before channel 0's");
            if (notified) run.actors.check_granted_in_order(self, index);
            ++got;
        } else if (cancelled) {
            run.actors.saw_cancelled(self);
        } else {
            if (r->error() != cochan::recv_errc::disconnected) {
                run.log.fail(self.name + ": unexpected select error");
            }
            run.values.saw_disconnected(self);
            break;
        }
    }
    self.op = "finishing";
    self.op_value = -1;
    rx0.reset();
    rx1.reset();
}

#undef COCHAN_EXPLORE_PASS_GATE

// ---- the harness's own operations (events) ----------------------------------------------------

/// The harness sends a value of its own (`H`): `try_send` on a bounded channel, `send` on an
/// unbounded one. It must not get ahead of a send already waiting (no barging).
template <class Tx> void harness_send(run_state& run, actor_info& h, int seq, Tx& tx) {
    constexpr bool bounded = requires {
        tx.capacity();
    };
    std::optional<payload> v;
    v.emplace(run.values.new_value(h, seq));
    const int id = v->id();
    const auto waiting = run.actors.waiting_sends(h.channel);
    const int receivers_waiting = run.actors.waiting_on(h.channel, true);
    std::optional<cochan::send_result<payload>> r;
    if constexpr (bounded) {
        r.emplace(tx.try_send(std::move(*v)));
    } else {
        r.emplace(tx.send(std::move(*v)));
    }
    if (*r) {
        run.values.sent(h, id);
        run.values.accepted_by_try_send(id, waiting);
        if (run.values.rendezvous(h.channel)) run.values.check_handed_to_receiver(h, id);
    } else {
        if (r->error().reason == cochan::send_errc::full && run.values.rendezvous(h.channel) &&
            receivers_waiting != 0) {
            run.log.fail("H: try_send on a rendezvous channel was full while a receiver waited");
        }
        run.values.returned(h, r->error().value, id,
                            r->error().reason == cochan::send_errc::full ? "try_send full"
                                                                         : "send disconnected");
    }
}

/// The harness takes a value with `try_recv`, if there is one.
template <class Rx> void harness_recv(run_state& run, actor_info& h, Rx& rx) {
    const int senders_waiting = run.actors.waiting_on(h.channel, false);
    auto r = rx.try_recv();
    if (r) {
        run.values.received(h, *r, run.log.tick());
    } else {
        if (r.error() == cochan::recv_errc::empty && run.values.rendezvous(h.channel) &&
            senders_waiting != 0) {
            run.log.fail("H: try_recv on a rendezvous channel was empty while a send waited");
        }
        run.log.note(std::string("H: try_recv ") +
                     (r.error() == cochan::recv_errc::empty ? "empty" : "disconnected"));
    }
}

} // namespace cochan_explore
