// Deterministic schedule exploration for cochan's channels: the umbrella header, which every
// source of cochan_explore includes first (before any cochan header), and the overview.
//
// A scenario is a few coroutines ("actors") sharing one channel, or two: a select actor receives
// from both through `cochan::select` (resumed through the executor), beside plain actors on
// either. An actor either resumes through `.resume_on(executor)` (it is posted, and runs when
// the explorer picks it) or uses the default inline resumption: the operation that completes its
// wait resumes it at once, through the library's trampoline, inside that operation; while a
// coroutine runs inside the trampoline, the others it wakes are queued there. Actors also yield
// between operations. At each step the explorer chooses one option among the coroutines that are
// ready and the scenario's pending events (a stop request, a harness `try_send`/`try_recv`,
// dropping or closing an endpoint the harness holds, destroying a suspended coroutine, "kicking" an
// actor that waits at its gate). Inside the library, at the points marked COCHAN_DETAIL_INTERLEAVE
// (a slot freed by release_grant before a sender is admitted, a woken waiter queued on the
// trampoline, a receive or send about to link itself after registering its stop callback, a
// select whose branches are all linked before it suspends, a decided select about to unlink a
// losing branch; none of them under a channel's lock), the explorer chooses again: continue, or
// first fire one of the events the scenario allows at that point, as another thread (or the
// coroutine running there) could. Each event says where it may fire (`add_event`'s `where`, the
// `*_at` masks of `scenario_spec`: at::step, at::release_grant, ...); one allowed only between
// steps adds no choice at a hook, so a scenario that allows none at hooks explores exactly the
// schedules it did before hooks existed. A run is a sequence of choices: `explore()` enumerates
// every sequence up to a depth bound (stateless DFS: replay a prefix, then take option 0), then
// runs N seeded random schedules, and checks every run:
//
// - exactly-once, across both channels: every value created has exactly one fate: received
//   once, handed back to its producer by a failed send (the very same value), or destroyed by
//   the channel; a value whose send succeeded may be destroyed only once no receiver remains;
// - FIFO per producer: each consumer sees a producer's values in order, and so does the
//   channel's order of taking values (the moment a value leaves the buffer or is granted);
// - no barging: a value accepted by a `try_send` while a send was waiting does not leave the
//   channel before that send's value (FIFO of waiting senders: docs/contract.md, rule 2);
// - strict capacity, at every step and per channel: values buffered plus values granted to
//   receivers that have not run yet never exceed the capacity, and `size()` equals the values
//   buffered; a rendezvous buffers nothing, and a send on it succeeds only once a receiver has
//   the value; no consumer holds two granted values (a select's losing branch kept one);
// - select: the value came from the channel its index names; one that finds values without
//   waiting takes the lowest index's, and does not wait when a value is buffered; a stop while
//   it links completes it without waiting; `disconnected` only once every channel has ended;
// - no lost wake-up, at every step: a receiver (a select: on each of its channels) waits only
//   while nothing is buffered and a sender remains (and no receiver closed the channel); on a
//   rendezvous a receiver and a sender never both wait, and a `try_send`/`try_recv` finds the
//   waiting peer; a sender waits only while no slot is free and a receiver remains; no
//   operation is completed without its coroutine being notified, nothing is left queued on
//   the trampoline;
// - cancellation: a stop requested before an operation starts, or while it is about to link
//   (at its *_before_link point), completes it `cancelled` without waiting (a send hands its
//   value back);
// - every waiter completed: when no coroutine is ready and no event is left, every actor has
//   finished (or was destroyed);
// - no leak: `counted::live() == 0` once the channel is gone, and every coroutine is notified
//   once per wait and resumed only after its notification.
//
// A failing run prints its choice sequence; `cochan_explore --replay 'name:choices'` runs it
// again, printing every step and every choice made at a hook point. A crash (ASan, UBSan, a
// failed assertion) prints it too. Single-threaded: the channel's lock is never contended,
// and every thread of the model shares one trampoline.
//
// The pieces, in the order included (each header includes what it needs, hooks.hpp first):
//
//   hooks.hpp      COCHAN_DETAIL_INTERLEAVE, the hook points, where an event may fire, the
//                  table of events and the choice at a hook point
//   schedule.hpp   choice sequences, replay strings, the run's log and clock, DFS and random
//                  enumeration, crash reports (no cochan header: a run is a function here)
//   actors.hpp     actor_task, the actors' states and ready queue, the protocol of a tracked
//                  operation, notify spying for inline resumption, when a coroutine may be
//                  destroyed
//   ledger.hpp     the payload, the value records, and the checks above that concern values
//                  and waiters (exactly-once, FIFO, barging, capacity, lost wake-ups, the end)
//   run_state.hpp  one run: the step loop, the hook-point choice, what reaches the run in
//                  progress; what a scenario is, run_once() and explore()
//   scripts.hpp    what producers and consumers do, the harness's own operations, endpoints
//   build.hpp      scenario_spec, and building a run from it (make_scenario<Kind>)
//
// scenarios.cpp lists the scenarios; main.cpp is the command line.
#pragma once

#include "explore/hooks.hpp" // first: it defines COCHAN_DETAIL_INTERLEAVE

#include "explore/schedule.hpp"

#include "explore/actors.hpp"
#include "explore/ledger.hpp"
#include "explore/run_state.hpp"

#include "explore/scripts.hpp"

#include "explore/build.hpp"
