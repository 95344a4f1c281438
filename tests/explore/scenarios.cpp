// The scenarios cochan_explore runs (main.cpp is its command line; explorer.hpp says what a run
// checks). Each is one entry: a comment saying what it explores and the bug it would catch,
// then make_scenario<Kind>({...}) with the fields of scenario_spec (build.hpp) it sets, in that
// order; what it leaves out keeps its default (none of that kind of event, capacity 1, no
// depth bound). Adding a scenario is adding an entry.
//
// Actors are numbered producers first, then consumers: with one producer, C0 is actor 1.
// A scenario whose scripts name channel 1 (`on_channel(..., 1)`, `selecting(...)`) has two
// channels, of the kinds make_scenario<Kind0, Kind1> names (Kind1 defaults to Kind0).
// Depth bounds: a scenario is exhaustive (the default depth) when it has at most ~130k
// schedules; the larger ones are bounded so the default run stays within CI's budget (a
// Debug+ASan build runs ~45k schedules a second) and get random schedules beyond the bound.
// Events allowed at hook points (`at::...` masks) add choices only to the scenarios that ask
// for them.
#include "explore/explorer.hpp"

#include "support/channels.hpp"

#include <vector>

using namespace cochan_explore;
using cochan_test::mpmc_bounded;
using cochan_test::mpmc_rendezvous;
using cochan_test::mpmc_unbounded;
using cochan_test::spmc_bounded;
using cochan_test::spmc_rendezvous;
using cochan_test::spmc_unbounded;

std::vector<scenario> cochan_explore::all_scenarios() {
    return {
        // ---- SPMC, bounded ----------------------------------------------------------------

        // One slot, each side waiting in turn: a lost wake-up on the plain hand-off path.
        make_scenario<spmc_bounded>({
            .name = "spmc_b1_1p1c",
            .what = "a sender and a receiver waiting in turn on one slot",
            .capacity = 1,
            .producers = {closing_at_end(producer(3))},
            .consumers = {consumer()},
        }),
        // A stop racing a grant between competing receivers: a granted value lost or doubled.
        make_scenario<spmc_bounded>({
            .name = "spmc_b1_1p2c_stop_rx",
            .what = "two competing receivers, one stopped at any step",
            .capacity = 1,
            .producers = {producer(3)},
            .consumers = {with_token(consumer()), consumer()},
            .stops = {1},
        }),
        // A stop racing a waiting send's admission: a cancelled send that loses or sends its value.
        make_scenario<spmc_bounded>({
            .name = "spmc_b1_stop_tx",
            .what = "a waiting send stopped at any step, then retried",
            .capacity = 1,
            .producers = {with_token(producer(3))},
            .consumers = {consumer()},
            .stops = {0},
        }),
        // Woken through the scheduler each actor's promise names (no resume_on): a resumption
        // the completer hands on without taking the queue reference, a grant lost or doubled.
        make_scenario<spmc_bounded>({
            .name = "spmc_b1_scheduled",
            .what = "promise-named schedulers: a sender and two receivers, one stopped at any "
                    "step",
            .capacity = 1,
            .producers = {scheduled(closing_at_end(producer(3)))},
            .consumers = {scheduled(with_token(consumer())), scheduled(consumer())},
            .stops = {1},
        }),
        // The same on a rendezvous MPMC channel, two senders: an admitted send resumed twice.
        make_scenario<mpmc_rendezvous>({
            .name = "mpmc_r_scheduled",
            .what = "promise-named schedulers on a rendezvous: two senders, one stopped, one "
                    "receiver",
            .capacity = 0,
            .producers = {scheduled(with_token(producer(2))), scheduled(producer(1))},
            .consumers = {scheduled(consumer())},
            .stops = {0},
        }),
        // try_send/try_recv beside waiting operations: barging past a waiter, a missed wake-up.
        make_scenario<spmc_bounded>({
            .name = "spmc_b2_try",
            .what = "try_send/try_recv against waiting operations (no barging)",
            .capacity = 2,
            .producers = {trying(closing_at_end(producer(4)))},
            .consumers = {trying(consumer()), consumer()},
        }),
        // close() with values buffered: values it drops, an early disconnected, a send after it.
        make_scenario<spmc_bounded>({
            .name = "spmc_b2_close_mid",
            .what = "close() mid-stream: receivers drain, then disconnected; a later send fails",
            .capacity = 2,
            .producers = {closing_after(producer(4), 2)},
            .consumers = {consumer(), trying(consumer())},
        }),
        // Every receiver leaving: a send left waiting forever, buffered values leaked.
        make_scenario<spmc_bounded>({
            .name = "spmc_b3_receivers_leave",
            .what = "every receiver leaves early: buffered values destroyed, a waiting send fails",
            .capacity = 3,
            .producers = {producer(6)},
            .consumers = {leaving_after(consumer(), 1), leaving_after(consumer(), 2)},
        }),
        // A receiver destroyed while waiting or granted: its value lost, its node used after free.
        make_scenario<spmc_bounded>({
            .name = "spmc_b1_destroy_rx",
            .what =
                "a receiver's coroutine destroyed while waiting or granted: its value passes on",
            .capacity = 1,
            .producers = {producer(3)},
            .consumers = {consumer(), consumer()},
            .destroys = {1},
        }),
        // The sender destroyed mid-send: its value leaked, a receiver left waiting forever.
        make_scenario<spmc_bounded>({
            .name = "spmc_b1_destroy_tx",
            .what = "the sender's coroutine destroyed while waiting, a receiver clone dropped",
            .capacity = 1,
            .producers = {producer(3)},
            .consumers = {consumer()},
            .spare_receivers = 1,
            .destroys = {0},
        }),

        // ---- SPMC, unbounded --------------------------------------------------------------

        // The unbounded receive path under a stop and a clone drop: a value lost, a stuck wait.
        make_scenario<spmc_unbounded>({
            .name = "spmc_unb_stop_rx",
            .what = "unbounded: competing receivers, a stop, a receiver clone dropped",
            .producers = {producer(3)},
            .consumers = {with_token(consumer()), trying(consumer())},
            .spare_receivers = 1,
            .stops = {1},
            .depth = 9,
            .randoms = 5000,
        }),
        // An unbounded hand-back from a destroyed granted receiver: the value lost or reordered.
        make_scenario<spmc_unbounded>({
            .name = "spmc_unb_destroy_rx",
            .what = "unbounded: a granted receiver destroyed hands its value on",
            .producers = {closing_at_end(producer(3))},
            .consumers = {consumer(), consumer()},
            .destroys = {2},
        }),

        // ---- MPMC, bounded ----------------------------------------------------------------

        // Two senders waiting on one slot: admitted out of FIFO order, or one never admitted.
        make_scenario<mpmc_bounded>({
            .name = "mpmc_b1_2p1c",
            .what = "two waiting senders served in FIFO order",
            .capacity = 1,
            .producers = {producer(2), producer(2)},
            .consumers = {consumer()},
        }),
        // A stopped sender at the head of the senders: its turn not passed on (a lost wake-up).
        make_scenario<mpmc_bounded>({
            .name = "mpmc_b1_stop_tx",
            .what = "a stopped waiting sender passes its turn",
            .capacity = 1,
            .producers = {with_token(producer(2)), producer(2)},
            .consumers = {consumer()},
            .stops = {0},
        }),
        // Waiting and try operations on both sides: per-producer FIFO or the capacity broken.
        make_scenario<mpmc_bounded>({
            .name = "mpmc_b2_2p2c",
            .what = "two senders, two receivers, waiting and try operations",
            .capacity = 2,
            .producers = {producer(2), trying(producer(2))},
            .consumers = {consumer(), trying(consumer())},
            .depth = 10,
            .randoms = 5000,
        }),
        // The last receiver dropped at any step: waiting senders never failed, the buffer leaked.
        make_scenario<mpmc_bounded>({
            .name = "mpmc_b1_last_rx_drop",
            .what = "the last receiver dropped at any step: waiting senders fail, the buffer is "
                    "destroyed",
            .capacity = 1,
            .producers = {producer(3), producer(2)},
            .consumers = {leaving_after(consumer(), 1)},
            .spare_receivers = 1,
        }),
        // A sender clone closed at any step: receivers told disconnected too early, or never.
        make_scenario<mpmc_bounded>({
            .name = "mpmc_b2_spare_close",
            .what = "a sender clone closed at any step: receivers wait for it, then disconnect",
            .capacity = 2,
            .producers = {producer(2)},
            .consumers = {consumer(), with_token(consumer())},
            .spare_senders = 1,
            .close_spares = true,
            .stops = {2},
        }),
        // A waiting sender destroyed: its node left in the senders' FIFO (use after free, a skip).
        make_scenario<mpmc_bounded>({
            .name = "mpmc_b1_destroy_tx",
            .what = "a waiting sender destroyed: unlinked from the FIFO of senders",
            .capacity = 1,
            .producers = {producer(2), producer(2)},
            .consumers = {consumer()},
            .destroys = {0},
        }),
        // A receiver stopped with values buffered: a cancelled receive that took or lost a value.
        make_scenario<mpmc_bounded>({
            .name = "mpmc_b3_stop_rx",
            .what = "capacity 3, two senders, a stopped receiver",
            .capacity = 3,
            .producers = {producer(3), closing_at_end(producer(3))},
            .consumers = {with_token(consumer())},
            .stops = {2},
            .depth = 9,
            .randoms = 5000,
        }),
        // A granted receiver destroyed beside a stopped one: the hand-back lost or misdelivered.
        make_scenario<mpmc_bounded>({
            .name = "mpmc_b2_destroy_and_stop",
            .what = "a granted receiver destroyed while another is stopped",
            .capacity = 2,
            .producers = {producer(2), producer(1)},
            .consumers = {with_token(consumer()), consumer()},
            .stops = {2},
            .destroys = {3},
            .depth = 9,
            .randoms = 5000,
        }),

        // ---- MPMC, unbounded --------------------------------------------------------------

        // Unbounded MPMC with a stop and a clone drop: per-producer FIFO, an early disconnect.
        make_scenario<mpmc_unbounded>({
            .name = "mpmc_unb_2p2c",
            .what = "unbounded: two senders, two receivers, a stop, a sender clone dropped",
            .producers = {producer(2), producer(2)},
            .consumers = {with_token(consumer()), consumer()},
            .spare_senders = 1,
            .stops = {2},
            .depth = 7,
            .randoms = 5000,
        }),
        // Unbounded, receivers leaving: values kept after the last receiver, a send not failed.
        make_scenario<mpmc_unbounded>({
            .name = "mpmc_unb_leave",
            .what = "unbounded: receivers leave early, the last clone dropped at any step",
            .producers = {producer(3), closing_after(producer(2), 1)},
            .consumers = {leaving_after(consumer(), 1), trying(leaving_after(consumer(), 2))},
            .spare_receivers = 1,
        }),

        // ---- hook points and inline resumption --------------------------------------------

        // A try_send in release_grant's lock-free gap: barging past a waiting send (defect 1).
        make_scenario<mpmc_bounded>({
            .name = "mpmc_b1_barging",
            .what = "a try_send in release_grant's lock-free gap must not barge past a waiting "
                    "send",
            .capacity = 1,
            .producers = {producer(2)},
            .consumers = {consumer()},
            .spare_senders = 1,
            .harness_sends = 1,
            .harness_send_at = at::release_grant,
        }),
        // Receivers destroyed while queued on the trampoline: use after free there (defect 2).
        make_scenario<spmc_unbounded>({
            .name = "spmc_unb_trampoline_destroy",
            .what = "inline: a sender woken through its gate grants to receivers that queue on "
                    "the trampoline; each destroyed there or between steps",
            .producers = {gated(closing_at_end(producer(2)))},
            .consumers = {resuming_inline(consumer()), resuming_inline(consumer())},
            .destroys = {1, 2},
            .destroy_at = at::step | at::trampoline_queued,
        }),
        // An admitted sender destroyed while queued on the trampoline: use after free (defect 2).
        make_scenario<spmc_bounded>({
            .name = "spmc_b1_trampoline_destroy_tx",
            .what = "inline: a send admitted and queued on the trampoline, destroyed there or "
                    "between steps",
            .capacity = 1,
            .producers = {resuming_inline(producer(3))},
            .consumers = {gated(resuming_inline(consumer()))},
            .destroys = {0},
            .destroy_at = at::step | at::trampoline_queued,
        }),
        // A stop inside the trampoline, then a destruction: a double resumption, a use after free.
        make_scenario<spmc_unbounded>({
            .name = "spmc_unb_trampoline_stop",
            .what = "inline: a stop requested inside the trampoline queues the receive, then it "
                    "is destroyed",
            .producers = {gated(closing_at_end(producer(2)))},
            .consumers = {resuming_inline(consumer()), resuming_inline(with_token(consumer()))},
            .stops = {2},
            .stop_at = at::trampoline_queued,
            .destroys = {2},
            .destroy_at = at::step | at::trampoline_queued,
        }),
        // A woken batch whose first member destroys another: the batch touching a freed waiter.
        make_scenario<spmc_unbounded>({
            .name = "spmc_unb_batch_destroy",
            .what = "inline: a disconnection wakes a batch; the first woken destroys another, an "
                    "event a third",
            .producers = {producer(1)},
            .consumers = {destroying_on_disconnect(resuming_inline(consumer()), 2),
                          resuming_inline(consumer()), resuming_inline(consumer())},
            .destroys = {3},
            .destroy_at = at::step | at::trampoline_queued,
        }),
        // Stops between a stop callback's registration and linking: missed, the wait never ends.
        make_scenario<spmc_bounded>({
            .name = "spmc_b1_stop_before_link",
            .what = "stops landing before a send or receive links: cancelled at once, the value "
                    "handed back",
            .capacity = 1,
            .producers = {with_token(producer(2))},
            .consumers = {resuming_inline(with_token(consumer()))},
            .stops = {0, 1},
            .stop_at = at::step | at::before_link,
        }),
        // Inline resumption everywhere: re-entering the completing operation, a lost wake-up.
        make_scenario<mpmc_bounded>({
            .name = "mpmc_b1_inline",
            .what = "inline everywhere: admitted senders and granted receivers resume inside the "
                    "operations that complete them",
            .capacity = 1,
            .producers = {resuming_inline(producer(2)), resuming_inline(producer(2))},
            .consumers = {resuming_inline(consumer())},
        }),
        // A try_send and a stop at every hook point, inline: barging, a missed stop, a freed node.
        make_scenario<mpmc_bounded>({
            .name = "mpmc_b1_inline_hooks",
            .what = "inline: a try_send and a stop at every hook point, the receiver destroyed "
                    "while queued",
            .capacity = 1,
            .producers = {resuming_inline(producer(2)), resuming_inline(with_token(producer(1)))},
            .consumers = {resuming_inline(consumer())},
            .spare_senders = 1,
            .stops = {1},
            .stop_at = at::step | at::hooks,
            .destroys = {2},
            .destroy_at = at::step | at::trampoline_queued,
            .harness_sends = 1,
            .harness_send_at = at::step | at::hooks,
            .depth = 10,
            .randoms = 5000,
        }),
        // A try_recv, stops and a destruction at hook points: a slot granted twice, a value lost.
        make_scenario<spmc_bounded>({
            .name = "spmc_b2_inline_mixed",
            .what = "inline and resume_on receivers; a try_recv, stops and a destruction at the "
                    "hook points",
            .capacity = 2,
            .producers = {resuming_inline(with_token(producer(3)))},
            .consumers = {resuming_inline(consumer()), with_token(consumer())},
            .spare_receivers = 1,
            .stops = {0, 2},
            .stop_at = at::step | at::hooks,
            .destroys = {1},
            .destroy_at = at::step | at::trampoline_queued | at::release_grant,
            .harness_recvs = 1,
            .harness_recv_at = at::hooks,
            .depth = 9,
            .randoms = 5000,
        }),
        // ---- select -----------------------------------------------------------------------

        // A select beside a plain receiver: a value kept by a losing branch, FIFO per channel.
        make_scenario<spmc_unbounded>({
            .name = "select_unb_2ch",
            .what = "select over two unbounded channels, a producer on each, a plain receiver "
                    "competing on channel 0",
            .producers = {closing_at_end(producer(2)), on_channel(closing_at_end(producer(2)), 1)},
            .consumers = {selecting(consumer()), consumer()},
        }),
        // A stop at any step, between linking the branches, or once linked: a value lost to the
        // cancelled select, a select left waiting, a cancelled one that took a value.
        make_scenario<spmc_bounded>({
            .name = "select_b1_stop",
            .what = "select over two bounded(1) channels, stopped at any step or while it links",
            .producers = {closing_at_end(producer(2)), on_channel(closing_at_end(producer(2)), 1)},
            .consumers = {selecting(with_token(consumer())), on_channel(consumer(), 1)},
            .stops = {2},
            .stop_at = at::step | at::recv_before_link | at::select_linked,
            .depth = 9,
            .randoms = 5000,
        }),
        // Sends landing while a select links, once linked and while it unlinks its losers: the
        // claim granted twice, a value left in a losing branch, the owner resumed twice.
        make_scenario<mpmc_bounded>({
            .name = "select_b1_hooks",
            .what = "a try_send on channel 1 while the select links, before it suspends and while "
                    "it unlinks a losing branch",
            .producers = {closing_at_end(producer(2)), on_channel(producer(1), 1)},
            .consumers = {selecting(consumer()), on_channel(consumer(), 1)},
            .spare_senders_1 = 1,
            .harness_sends = 1,
            .harness_send_at = at::step | at::recv_before_link | at::select_points,
            .harness_channel = 1,
            .depth = 9,
            .randoms = 5000,
        }),
        // One channel disconnecting, then the other, at any step or while the select links: a
        // select that ends while a branch can still deliver, or waits on nothing.
        make_scenario<mpmc_unbounded>({
            .name = "select_unb_disconnect",
            .what = "sender clones of each channel dropped at any step or while the select links",
            .producers = {producer(1), on_channel(producer(1), 1)},
            .consumers = {selecting(consumer()), on_channel(consumer(), 1)},
            .spare_senders = 1,
            .spare_senders_1 = 1,
            .spare_at = at::step | at::recv_before_link | at::select_linked,
        }),
        // The select's coroutine destroyed while waiting or after its decision: the value its
        // winning branch holds goes back, the branches are unlinked.
        make_scenario<spmc_bounded>({
            .name = "select_b1_destroy",
            .what = "a waiting or decided select destroyed: its value passes to the next receiver",
            .producers = {closing_at_end(producer(2)), on_channel(closing_at_end(producer(1)), 1)},
            .consumers = {selecting(consumer()), consumer()},
            .destroys = {2},
        }),
        // try_select and select over two kinds: bias, `empty` with a value there, kinds mixed.
        make_scenario<spmc_bounded, mpmc_unbounded>({
            .name = "select_mixed_try",
            .what = "try_select then select over bounded(1) and unbounded MPMC, a receiver "
                    "competing on channel 1",
            .producers = {closing_at_end(producer(2)), on_channel(closing_at_end(producer(2)), 1)},
            .consumers = {trying(selecting(consumer())), on_channel(trying(consumer()), 1)},
        }),
        // A select over rendezvous channels: a send completed into a losing branch.
        make_scenario<spmc_rendezvous>({
            .name = "select_rdv",
            .what = "select over two rendezvous channels, a plain receiver competing on channel 0",
            .producers = {closing_at_end(producer(2)), on_channel(closing_at_end(producer(1)), 1)},
            .consumers = {selecting(consumer()), consumer()},
        }),
        // A receiver closing channel 0 under a select: the select ends too early, or never.
        make_scenario<mpmc_bounded>({
            .name = "select_b1_rx_close",
            .what = "a receiver closes channel 0 at any step while a select waits on both",
            .producers = {producer(2), on_channel(producer(1), 1)},
            .consumers = {selecting(consumer())},
            .spare_receivers = 1,
            .close_spare_rx = true,
        }),

        // ---- rendezvous -------------------------------------------------------------------

        // One sender, two receivers, one stopped: a send completed with nobody holding it.
        make_scenario<spmc_rendezvous>({
            .name = "rdv_1p2c_stop",
            .what = "rendezvous: one sender, two receivers, one stopped at any step",
            .producers = {closing_at_end(producer(3))},
            .consumers = {with_token(consumer()), consumer()},
            .stops = {1},
            .depth = 12,
            .randoms = 5000,
        }),
        // Two senders waiting for one receiver: served out of FIFO order, a sender never served.
        make_scenario<mpmc_rendezvous>({
            .name = "rdv_2p1c",
            .what = "rendezvous: two senders wait for one receiver, FIFO",
            .producers = {producer(2), producer(2)},
            .consumers = {consumer()},
        }),
        // try_send and try_recv pairing with a waiting peer: a value taken with no sender, a
        // try full while a receiver waits, a try_recv empty while a send waits.
        make_scenario<mpmc_rendezvous>({
            .name = "rdv_mpmc_try",
            .what = "rendezvous: try_send/try_recv by actors and the harness pair with waiters",
            .producers = {trying(producer(2)), producer(1)},
            .consumers = {trying(consumer()), consumer()},
            .spare_receivers = 1,
            .spare_senders = 1,
            .harness_sends = 1,
            .harness_recvs = 1,
            .depth = 6,
            .randoms = 5000,
        }),

        // ---- close from a receiver ----------------------------------------------------------

        // rx.close() while senders wait: a waiting send not failed, a buffered value dropped.
        make_scenario<mpmc_bounded>({
            .name = "rx_close_b1",
            .what = "a receiver closes the channel at any step while senders wait; receivers "
                    "drain",
            .producers = {producer(2), producer(2)},
            .consumers = {consumer()},
            .spare_receivers = 1,
            .close_spare_rx = true,
        }),
        // rx.close() on a rendezvous: a waiting sender's value lost or taken after the close.
        make_scenario<spmc_rendezvous>({
            .name = "rx_close_rdv",
            .what = "rendezvous: a receiver closes the channel at any step",
            .producers = {producer(3)},
            .consumers = {consumer()},
            .spare_receivers = 1,
            .close_spare_rx = true,
        }),
    };
}
