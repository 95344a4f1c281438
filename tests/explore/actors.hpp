// The actors of a run and how the explorer follows them: their coroutine type (actor_task),
// the state each is in, the ready queue the explorer picks from, and the protocol of a channel
// operation an actor awaits (it links, is notified, is queued on the trampoline, resumes),
// including the notification spying that follows inline resumption, and when a suspended
// coroutine may be destroyed.
//
// To follow inline resumption (explorer.hpp) the explorer reads the waiter node inside each
// operation's awaitable (its state) and, at the *_before_link point, wraps its notification
// function, so it knows when a waiter is notified, when it is queued on the trampoline, and
// when it resumes.
//
// A destroy event fires only for a coroutine that is really suspended: linked in an operation
// nobody has completed yet, notified through the executor and not yet run, or queued on the
// trampoline; never one on the call stack (running, or inside its own await_suspend) nor one
// whose completion is being notified at that moment (another thread must not destroy it then:
// docs/design.md, known limits). An actor may destroy another suspended one itself.
#pragma once

#include "explore/hooks.hpp" // first: it defines COCHAN_DETAIL_INTERLEAVE

#include <cochan/cochan.hpp>

#include "explore/schedule.hpp"

#include <algorithm>
#include <array>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cochan_explore {

using cochan::detail::wait_state;
using cochan::detail::waiter_base;

/// The waiter node inside a channel operation's awaitable: the one `waiter_node()` names (a
/// receive's or a send's, built by its await_suspend), else the awaitable itself, which derives
/// from it privately (a C-style cast is the one conversion to an inaccessible base,
/// [expr.cast]/4). The explorer reads its `state_` and wraps its `notify_`
/// (actor_table::install_spy).
template <class Op> waiter_base* waiter_of(Op& op) noexcept {
    if constexpr (requires { op.waiter_node(); }) {
        return op.waiter_node();
    } else {
        // NOLINTNEXTLINE(google-readability-casting): static_cast cannot reach a private base
        return (waiter_base*)std::addressof(op);
    }
}

/// An actor's coroutine: lazy (the explorer starts it as a choice like any other), reports its
/// end to the run (which destroys its frame there and then: an inline actor may finish inside
/// another coroutine's operation), and records where its frame lives so the capacity check can
/// tell a value held by an actor from a value held by the channel. Its promise reports to the
/// run in progress (run_state.hpp defines those two functions).
class actor_task {
  public:
    struct promise_type {
        static void* operator new(std::size_t n);
        static void operator delete(void* p) noexcept { ::operator delete(p); }

        struct final_awaiter {
            bool await_ready() const noexcept { return false; }
            void await_suspend(std::coroutine_handle<promise_type> h) const noexcept;
            void await_resume() const noexcept {}
        };

        actor_task get_return_object() noexcept {
            return actor_task(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        std::suspend_always initial_suspend() const noexcept { return {}; }
        final_awaiter final_suspend() const noexcept { return {}; }
        void return_void() const noexcept {}
        void unhandled_exception() noexcept { error = std::current_exception(); }
        /// The explorer's queue for an actor scripted `scheduled(...)`, else none (run_state.hpp).
        cochan::scheduler_ref cochan_scheduler() const noexcept;

        std::exception_ptr error;
        bool scheduled = false; // set by the builder before the actor starts
    };

    explicit actor_task(std::coroutine_handle<promise_type> h) noexcept : handle(h) {}
    std::coroutine_handle<promise_type> handle;
};

enum class actor_state : std::uint8_t {
    ready,     // in the explorer's ready queue: not started, yielded, or (resume_on) notified
    running,   // on the call stack: resumed and not suspended yet
    linking,   // on the call stack, inside the await_suspend of a channel operation
    in_op,     // suspended in a channel operation, not yet notified
    notified,  // inline: notified through the trampoline, which queued it (or is resuming it)
    yielding,  // about to post itself between two operations
    finished,  // its body returned (and its frame was destroyed)
    destroyed, // its frame was destroyed while it was suspended
};

struct actor_info {
    std::string name;
    int index = 0;     // among all actors
    int producer = -1; // producers: 0.., consumers: -1
    std::coroutine_handle<actor_task::promise_type> handle;
    const char* frame_begin = nullptr; // null once the frame is gone
    const char* frame_end = nullptr;
    actor_state state = actor_state::ready;
    bool inline_resume = false;  // its channel operations resume inline (no resume_on)
    bool awaiting_recv = false;  // in (or just notified from) a receive
    bool gate_op = false;        // waiting at its gate (another channel), not in the channel
    bool queued = false;         // notified and queued on the trampoline
    bool posted = false;         // notified during its current operation
    std::uint64_t posted_at = 0; // the clock when it was notified
    std::uint64_t linked_at = 0; // the clock when its current operation began
    int channel = 0;             // the channel its operations use (a select: all of them)
    unsigned wait_mask = 0;      // the channels its current operation waits on (bit per channel)
    bool selecting = false;      // its current operation is a select
    unsigned older_mask = 0;     // when notified: channels where an older waiter of its side waited
    waiter_base select_node;     // a select's stand-in waiter node (the explorer's, not the
                                 // library's): waiting from its suspension to its notification
    // The current operation: its waiter node (inside the awaitable, in the frame), a serial
    // number, whether it suspended, and whether a stop landed before it linked.
    waiter_base* waiter = nullptr;
    std::uint64_t op_serial = 0;
    std::uint64_t linking_mark = 0; // actor_table::foreign_runs_ when it began linking
    bool op_suspended = false;
    bool stopped_before_link = false;
    cochan::default_stop_source stop;
    bool use_token = false;    // operations carry `stop`'s token (until one is cancelled)
    std::vector<int> last_seq; // consumers: the last value seen from each producer
    const char* op = "start";  // what it is doing, for traces: op and op_value's name
    int op_value = -1;

    bool alive() const noexcept {
        return state != actor_state::finished && state != actor_state::destroyed;
    }
    bool contains(const void* p) const noexcept {
        const char* c = static_cast<const char*>(p);
        return frame_begin != nullptr && c >= frame_begin && c < frame_end;
    }
    /// Suspended in an operation that is linked and that nobody has completed yet.
    bool linked() const noexcept {
        return state == actor_state::in_op && waiter != nullptr &&
               waiter->state_ == wait_state::waiting;
    }
};

/// A stack of at most `N` items that never allocates (one run allocates as little as it can:
/// under ASan every allocation records a stack trace).
template <class T, std::size_t N> class small_stack {
  public:
    void push_back(T v) {
        if (n_ == N) throw std::length_error("small_stack overflow");
        items_[n_++] = v;
    }
    void pop_back() noexcept { --n_; }
    T& back() noexcept { return items_[n_ - 1]; }
    bool empty() const noexcept { return n_ == 0; }
    const T* begin() const noexcept { return items_.data(); }
    const T* end() const noexcept { return items_.data() + n_; }

  private:
    std::array<T, N> items_{};
    std::size_t n_ = 0;
};

template <class Op> struct tracked;
template <class Op> struct tracked_select;

/// The actors of one run, the ready queue, and what the explorer knows of each one's
/// current operation.
class actor_table {
  public:
    explicit actor_table(run_log& log) : log_(log) {}
    actor_table(const actor_table&) = delete;
    actor_table& operator=(const actor_table&) = delete;

    /// How traces and failures name a value ("P0#1"): the ledger's names, set by the run.
    std::function<std::string(int)> value_name;

    // ---- set-up ---------------------------------------------------------------------------

    actor_info& add(std::string name, int producer) {
        actors_.emplace_back();
        actor_info& a = actors_.back();
        a.name = std::move(name);
        a.index = static_cast<int>(actors_.size()) - 1;
        a.producer = producer;
        if (producer >= 0) producers_ = std::max(producers_, producer + 1);
        return a;
    }

    /// The harness as a producer and consumer of its own events' values ("H"): not a
    /// coroutine. Add it after every actor.
    actor_info& harness() {
        if (harness_ == nullptr) {
            harness_ = &add("H", producers_);
            harness_->state = actor_state::finished;
            harness_->op = "harness";
        }
        return *harness_;
    }
    /// The harness's producer number, or -1 if it has none.
    int harness_producer() const noexcept { return harness_ != nullptr ? harness_->producer : -1; }

    /// Adopts the actor's coroutine (created suspended) and makes its start a choice.
    void start(actor_info& a, actor_task t) {
        a.handle = t.handle;
        a.frame_begin = last_frame_begin_;
        a.frame_end = last_frame_end_;
        a.state = actor_state::ready;
        ready_.push_back(&a);
    }

    actor_info& operator[](int i) { return actors_[static_cast<std::size_t>(i)]; }
    const std::deque<actor_info>& all() const noexcept { return actors_; }
    int producers() const noexcept { return producers_; }
    const actor_info& producer(int p) const {
        for (const auto& a : actors_) {
            if (a.producer == p) return a;
        }
        return actors_.front();
    }

    std::string doing(const actor_info& a) const {
        return a.op_value >= 0 ? std::string(a.op) + " " + value_name(a.op_value) : a.op;
    }

    // ---- the ready queue --------------------------------------------------------------------

    std::size_t ready_count() const noexcept { return ready_.size(); }
    /// Takes the `c`-th ready actor out of the queue (the explorer's choice).
    actor_info& take_ready(std::size_t c) {
        actor_info* a = ready_[c];
        ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(c));
        return *a;
    }
    void resume(actor_info& a) {
        a.state = actor_state::running;
        a.handle.resume(); // a finished actor's frame is destroyed inside (finished())
        if (a.state == actor_state::running || a.state == actor_state::linking)
            log_.fail(a.name + " suspended outside the explorer's control");
    }

    // ---- what actors call -----------------------------------------------------------------

    struct poster {
        actor_table* actors;
        void operator()(std::coroutine_handle<> h) const { actors->post(h); }
    };
    poster executor() noexcept { return poster{this}; }
    /// The same queue as a scheduler (`scheduler_ref`): for actors whose promise names it.
    void schedule(std::coroutine_handle<> h) { post(h); }

    struct yield_awaiter {
        actor_table* actors;
        actor_info* self;
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> h) const {
            self->op = "yield";
            self->op_value = -1;
            self->state = actor_state::yielding;
            actors->post(h);
        }
        void await_resume() const noexcept {}
    };
    /// Between two operations: lets the explorer run someone else first.
    yield_awaiter yield(actor_info& self) noexcept { return {this, &self}; }

    /// Before `co_await`ing a channel operation (or the gate).
    /// `channels`: the channels it waits on (a bit each); 0: its own channel.
    void begin_op(actor_info& self, const char* what, int value, bool receive, bool gate = false,
                  unsigned channels = 0) {
        self.op = what;
        self.op_value = value;
        self.posted = false;
        self.awaiting_recv = receive;
        self.gate_op = gate;
        self.selecting = channels != 0;
        self.wait_mask = channels != 0 ? channels : 1U << self.channel;
        self.linked_at = log_.tick();
    }

    /// `co_await actors.track(self, op)` awaits `op` (a named awaitable) and follows it: when
    /// it links, is notified, is queued on the trampoline and resumes.
    template <class Op> tracked<Op> track(actor_info& self, Op& op) noexcept {
        return {this, &self, &op};
    }
    /// The same for a select (`cochan::select(...).resume_on(executor())`), which has no waiter
    /// node of its own the explorer could read: it follows `self.select_node` instead.
    template <class Op> tracked_select<Op> track_select(actor_info& self, Op& op) noexcept {
        return {this, &self, &op};
    }

    /// After an operation that completed through a notification with a value or a slot: it
    /// must have been granted to the oldest waiter of its side (FIFO among waiters:
    /// docs/contract.md, rule 2).
    /// `channel`: the channel it came from (-1: its own).
    void check_granted_in_order(const actor_info& self, int channel = -1) {
        const int ch = channel >= 0 ? channel : self.channel;
        if ((self.older_mask & (1U << ch)) != 0) {
            log_.fail(self.name + " was granted " + doing(self) + " on channel " +
                      std::to_string(ch) + " although an older waiter of its side was waiting " +
                      "there (FIFO among waiters)");
        }
    }
    bool notified(const actor_info& self) const noexcept { return self.posted; }
    /// After it: returns when the operation took effect (its notification, or now if it
    /// completed without suspending).
    std::uint64_t end_op(actor_info& self) {
        self.state = actor_state::running;
        self.awaiting_recv = false;
        self.gate_op = false;
        const bool was_posted = std::exchange(self.posted, false);
        return was_posted ? self.posted_at : log_.tick();
    }

    /// The values of the sends waiting now (linked, not admitted): a `try_send` about to run
    /// must not get ahead of them.
    std::vector<int> waiting_sends(int channel = 0) const {
        std::vector<int> ids;
        for (const auto& a : actors_) {
            if (a.linked() && !a.awaiting_recv && !a.gate_op && a.op_value >= 0 &&
                a.channel == channel)
                ids.push_back(a.op_value);
        }
        return ids;
    }

    /// How many operations of one side wait (linked) on `channel`.
    int waiting_on(int channel, bool receive) const {
        int n = 0;
        for (const auto& a : actors_) {
            if (a.linked() && !a.gate_op && a.awaiting_recv == receive &&
                (a.wait_mask & (1U << channel)) != 0)
                ++n;
        }
        return n;
    }

    void saw_cancelled(actor_info& self) {
        if (log_.verbose()) log_.note(self.name + ": cancelled");
        if (!self.stop.stop_requested()) {
            log_.fail(self.name + " was cancelled without a stop request");
        }
        self.use_token = false; // later operations run without a token
    }

    /// A stop request on `a`'s token (an event). If it lands while `a` is about to link an
    /// operation that carries the token, that operation must complete `cancelled` at once.
    static void stop_actor(actor_info& a) {
        if (a.state == actor_state::linking && !a.gate_op && a.waiter != nullptr &&
            a.waiter->state_ == wait_state::idle) {
            a.stopped_before_link = true;
        }
        a.stop.request_stop();
    }

    // ---- destruction --------------------------------------------------------------------------

    /// Whether an event may destroy `a` now: really suspended, and not being completed.
    static bool destroyable_by_event(const actor_info& a) noexcept {
        if (!a.handle) return false;
        switch (a.state) {
        case actor_state::in_op: return a.linked(); // not one whose completion is under way
        case actor_state::ready: return a.posted;   // notified, not run yet (resume_on)
        case actor_state::notified: return a.queued;
        default: return false;
        }
    }
    /// Whether an actor's code may destroy `a`: any suspended coroutine (it cannot tell a
    /// completion under way from a wait).
    static bool destroyable_by_actor(const actor_info& a) noexcept {
        if (!a.handle) return false;
        return a.state == actor_state::in_op || a.state == actor_state::ready ||
               (a.state == actor_state::notified && a.queued);
    }

    /// The actor's frame (and every awaitable in it) is destroyed now.
    void destroy(actor_info& a) {
        std::erase(ready_, &a);
        const auto h = std::exchange(a.handle, {});
        a.state = actor_state::destroyed;
        a.queued = false;
        dying_.push_back({a.frame_begin, a.frame_end, log_.tick()});
        h.destroy();
        dying_.pop_back();
        forget_spies(a);
        a.frame_begin = a.frame_end = nullptr;
    }

    /// `self` destroys `target` if it is suspended (a coroutine destroying another on its
    /// thread, which docs/design.md allows).
    void destroy_by(actor_info& self, int target) {
        actor_info& t = (*this)[target];
        if (!destroyable_by_actor(t)) {
            log_.note(self.name + ": " + t.name + " is not suspended, left alone");
            return;
        }
        log_.note(self.name + ": destroys " + t.name);
        ++foreign_runs_;
        destroy(t);
    }

    /// When the frame being destroyed that holds `p` began dying (the innermost such frame),
    /// if one does: a value moved out of it is handed back by a destroyed coroutine.
    std::optional<std::uint64_t> dying_since(const void* p) const noexcept {
        std::optional<std::uint64_t> at;
        const char* c = static_cast<const char*>(p);
        for (const auto& d : dying_) {
            if (c >= d.begin && c < d.end) at = d.at;
        }
        return at;
    }

    /// Destroys what is left (only after a failure: a clean run leaves nothing).
    void destroy_all() {
        for (auto& a : actors_) {
            if (a.handle) destroy(a);
        }
        ready_.clear();
    }

    // ---- the protocol of a tracked operation (see tracked<Op>) ------------------------------

    /// Its await_suspend begins: `w` is the operation's waiter node.
    std::uint64_t begin_linking(actor_info& a, waiter_base* w) {
        a.state = actor_state::linking;
        a.waiter = w;
        a.op_suspended = false;
        a.stopped_before_link = false;
        a.queued = false;
        a.linking_mark = foreign_runs_;
        linking_.push_back(&a);
        return ++a.op_serial;
    }

    /// Its await_suspend returns `linked`. Touches nothing in the frame: it may be gone.
    void end_linking(actor_info& a, std::uint64_t serial, bool linked) {
        if (!linking_.empty() && linking_.back() == &a) {
            linking_.pop_back();
        } else {
            log_.fail("the explorer lost track of " + a.name + "'s await_suspend");
        }
        if (a.op_serial != serial) return; // it was resumed meanwhile and began another one
        if (!linked) {
            forget_spy(a.waiter); // completed at once: it will not be notified
            if (a.state == actor_state::linking) a.state = actor_state::running;
            return;
        }
        a.op_suspended = true;
        if (a.state == actor_state::linking) a.state = actor_state::in_op;
        if (a.stopped_before_link) {
            log_.fail(a.name + ": a stop requested before its " + doing(a) +
                      " was linked did not cancel it (it waits)");
        }
    }

    /// Its await_resume begins: the coroutine runs again.
    void resumed(actor_info& a) {
        switch (a.state) {
        case actor_state::running: break; // the explorer resumed it (resume_on)
        case actor_state::linking: a.state = actor_state::running; break;
        case actor_state::notified:
            a.state = actor_state::running; // resumed by the trampoline, inline
            a.queued = false;
            ++foreign_runs_;
            log_.note(a.name + " resumes inline (" + doing(a) + ")");
            break;
        default:
            log_.fail(a.name + " resumed without a notification (" + doing(a) + ")");
            a.state = actor_state::running;
            break;
        }
    }

    /// A coroutine's body returned: check it, and destroy its frame.
    void finished(std::coroutine_handle<actor_task::promise_type> h) {
        if (actor_info* a = owner_of(h)) {
            if (h.promise().error) {
                try {
                    std::rethrow_exception(h.promise().error);
                } catch (const std::exception& e) {
                    log_.fail(a->name + " threw: " + e.what());
                } catch (...) {
                    log_.fail(a->name + " threw");
                }
            }
            forget_spies(*a);
            a->handle = {};
            a->frame_begin = a->frame_end = nullptr;
            a->state = actor_state::finished;
            a->op = "finished";
            a->op_value = -1;
        } else {
            log_.fail("a coroutine that belongs to no actor finished");
        }
        h.destroy();
    }

    /// An actor's frame was just allocated (the next start() adopts it).
    void frame_allocated(void* p, std::size_t n) {
        last_frame_begin_ = static_cast<const char*>(p);
        last_frame_end_ = last_frame_begin_ + n;
    }

    // ---- at the hook points -------------------------------------------------------------------

    /// Code other than the library's own runs now (an event fires).
    void foreign_run() noexcept { ++foreign_runs_; }

    /// The bookkeeping of inline resumption at a COCHAN_DETAIL_INTERLEAVE point, before the
    /// explorer's choice there; returns the actor about to link, at a *_before_link point.
    actor_info* before_hook_choice(hook_point p) {
        actor_info* linker = nullptr;
        switch (p) {
        case hook_point::recv_before_link:
        case hook_point::send_before_link:
            if (linking_.empty()) {
                log_.fail(std::string("an operation the explorer does not follow reached ") +
                          hook_name(p));
            } else {
                linker = linking_.back();
                if (linker->inline_resume || linker->gate_op) install_spy(*linker);
            }
            break;
        case hook_point::trampoline_queued:
            if (notifying_.empty() || notifying_.back()->state != actor_state::notified) {
                log_.fail("a waiter the explorer does not follow was queued on the trampoline");
            } else {
                notifying_.back()->queued = true;
                log_.note("queued on the trampoline: " + notifying_.back()->name);
            }
            break;
        case hook_point::release_grant:
        case hook_point::select_linked:
        case hook_point::select_unlink:
        case hook_point::ready_after_hint: break;
        }
        return linker;
    }
    /// After the choice: `linker` is not linked yet, so whatever ran there cannot have
    /// completed its operation; a notification before it links again comes from the library
    /// itself (mark_notified).
    void after_hook_choice(actor_info* linker) const noexcept {
        if (linker != nullptr) linker->linking_mark = foreign_runs_;
    }

    /// The notification function install_spy puts in an inline waiter (run_state.hpp defines
    /// it: it finds the run in progress).
    static void spy_notify(waiter_base* w) noexcept;

    /// A spied waiter is notified: record it, then let the library's notification resume the
    /// coroutine at once or queue it on the trampoline.
    void inline_notify(waiter_base* w) {
        const auto it = std::find_if(spies_.begin(), spies_.end(),
                                     [w](const spy_entry& e) { return e.waiter == w; });
        if (it == spies_.end()) {
            log_.fail("a waiter was notified twice, or without waiting");
            return; // not resumed: resuming it would do worse
        }
        const spy_entry e = *it;
        spies_.erase(it);
        if (!mark_notified(*e.actor, actor_state::notified)) return;
        notifying_.push_back(e.actor);
        e.original(w); // the library's notification: resume at once, or queue (trampoline)
        notifying_.pop_back();
    }

  private:
    struct spy_entry {
        waiter_base* waiter;
        waiter_base::notify_fn original;
        actor_info* actor;
    };
    struct dying_frame {
        const char* begin;
        const char* end;
        std::uint64_t at;
    };

    actor_info* owner_of(std::coroutine_handle<> h) noexcept {
        for (auto& a : actors_) {
            if (a.handle && a.handle.address() == h.address()) return &a;
        }
        return nullptr;
    }

    static std::string state_word(const actor_info& a) {
        switch (a.state) {
        case actor_state::ready: return a.posted ? "already notified" : "not waiting";
        case actor_state::notified: return "already notified";
        case actor_state::running: return "running";
        default: return "not waiting";
        }
    }

    /// A waiter of `a` is notified: `next` is ready (posted) or notified (inline).
    bool mark_notified(actor_info& a, actor_state next) {
        if (a.state == actor_state::linking) {
            // Completed while its await_suspend is still on the stack: legitimate only when
            // some other code ran there (another coroutine resumed inline, an event), as
            // another thread would; the library itself must never notify its own caller.
            if (foreign_runs_ == a.linking_mark) {
                log_.fail(a.name + " was notified from inside its own await_suspend (" + doing(a) +
                          ")");
                return false;
            }
        } else if (a.state != actor_state::in_op) {
            // Notified twice, notified while running, or notified without waiting: each would
            // resume the coroutine twice.
            log_.fail(a.name + " was notified while " + state_word(a) + " (" + doing(a) + ")");
            return false;
        }
        a.older_mask = 0;
        if (!a.gate_op) {
            for (const auto& other : actors_) {
                if (&other != &a && other.linked() && !other.gate_op &&
                    other.awaiting_recv == a.awaiting_recv && other.linked_at < a.linked_at) {
                    a.older_mask |= other.wait_mask & a.wait_mask;
                }
            }
        }
        if (a.selecting) a.select_node.state_ = wait_state::done;
        a.state = next;
        a.posted = true;
        a.posted_at = log_.tick();
        if (log_.verbose()) log_.note("notify " + a.name + " (" + doing(a) + ")");
        return true;
    }

    void post(std::coroutine_handle<> h) {
        actor_info* a = owner_of(h);
        if (a == nullptr) {
            log_.fail("a handle that belongs to no live actor was posted");
            return;
        }
        if (a->state == actor_state::yielding) {
            a->state = actor_state::ready;
        } else if (!mark_notified(*a, actor_state::ready)) {
            return;
        }
        ready_.push_back(a);
    }

    /// Wraps the notification of an inline operation about to link (its notify_ was just set
    /// by the library): the explorer then sees the notification, and whether the trampoline
    /// resumes the coroutine at once or queues it.
    void install_spy(actor_info& a) {
        waiter_base* w = a.waiter;
        if (w->notify_ == &spy_notify) return;
        forget_spy(w);
        spies_.push_back({w, w->notify_, &a});
        w->notify_ = &spy_notify;
    }
    void forget_spy(const waiter_base* w) {
        std::erase_if(spies_, [w](const spy_entry& e) { return e.waiter == w; });
    }
    void forget_spies(const actor_info& a) {
        std::erase_if(spies_, [&a](const spy_entry& e) { return e.actor == &a; });
    }

    run_log& log_;
    std::deque<actor_info> actors_;
    actor_info* harness_ = nullptr;
    int producers_ = 0;
    std::vector<actor_info*> ready_;
    small_stack<actor_info*, 32> linking_;   // actors inside await_suspend, innermost last
    small_stack<actor_info*, 32> notifying_; // inline notifications under way, innermost last
    small_stack<dying_frame, 32> dying_;     // frames being destroyed, innermost last
    std::vector<spy_entry> spies_;           // inline waiters whose notify_ the explorer wraps
    // Code other than the library's own that ran: inline resumptions, events, destructions.
    std::uint64_t foreign_runs_ = 0;
    const char* last_frame_begin_ = nullptr;
    const char* last_frame_end_ = nullptr;
};

/// The awaiter `actors.track(self, op)` returns: awaits `op` and reports its protocol. It lives
/// in the coroutine's frame, which may be destroyed as soon as `op` links: nothing after that
/// touches it.
template <class Op> struct tracked {
    actor_table* actors;
    actor_info* self;
    Op* op;

    /// A receive or send whose token is not stopped that finds a value (a free cell) completes
    /// here, in the operation's await_ready, without linking or suspending: the per-operation flags
    /// that begin_linking() would have reset are reset here.
    bool await_ready() {
        if (!op->await_ready()) return false;
        self->op_suspended = false;
        self->stopped_before_link = false;
        return true;
    }
    // Typed: the operation reads the actor's promise (a scheduler it may name).
    template <class Promise> bool await_suspend(std::coroutine_handle<Promise> h) {
        actor_table* t = actors;
        actor_info* a = self;
        const std::uint64_t serial = t->begin_linking(*a, waiter_of(*op));
        const bool linked = op->await_suspend(h);
        t->end_linking(*a, serial, linked);
        return linked;
    }
    auto await_resume() {
        actors->resumed(*self);
        return op->await_resume();
    }
};

/// The awaiter `actors.track_select(self, op)` returns: as tracked<Op>, for a select resumed
/// through the explorer's executor. Its stand-in node is `idle` while the select links its
/// branches (so a stop landing then must cancel it at once), `waiting` once it suspended, and
/// `done` when it is notified (actor_table::mark_notified).
template <class Op> struct tracked_select {
    actor_table* actors;
    actor_info* self;
    Op* op;

    /// The select's first pass (try_select's): when it finds a value, or every channel ended,
    /// or the token was stopped, it completes here without linking or suspending.
    bool await_ready() {
        if (!op->await_ready()) return false;
        self->op_suspended = false;
        self->stopped_before_link = false;
        return true;
    }
    bool await_suspend(std::coroutine_handle<> h) {
        actor_table* t = actors;
        actor_info* a = self;
        a->select_node.state_ = wait_state::idle;
        const std::uint64_t serial = t->begin_linking(*a, &a->select_node);
        const bool linked = op->await_suspend(h);
        if (linked && a->op_serial == serial && a->select_node.state_ == wait_state::idle)
            a->select_node.state_ = wait_state::waiting;
        t->end_linking(*a, serial, linked);
        return linked;
    }
    auto await_resume() {
        actors->resumed(*self);
        return op->await_resume();
    }
};

} // namespace cochan_explore
