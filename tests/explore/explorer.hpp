// Deterministic schedule exploration for cochan's channels.
//
// A scenario is a few coroutines ("actors") sharing one channel. An actor either resumes
// through `.resume_on(run.executor())` (it is posted, and runs when the explorer picks it) or
// uses the default inline resumption: the operation that completes its wait resumes it at once,
// through the library's trampoline, inside that operation; while a coroutine runs inside the
// trampoline, the others it wakes are queued there. Actors also yield between operations.
// At each step the explorer chooses one option among the coroutines that are ready and the
// scenario's pending events (a stop request, a harness `try_send`/`try_recv`, dropping or
// closing an endpoint the harness holds, destroying a suspended coroutine, "kicking" an actor
// that waits at its gate). Inside the library, at the points marked COCHAN_DETAIL_INTERLEAVE
// (a slot freed by release_grant before a sender is admitted, a woken waiter queued on the
// trampoline, a receive or send about to link itself after registering its stop callback;
// none of them under the channel's lock), the explorer chooses again: continue, or first fire
// one of the events the scenario allows at that point, as another thread (or the coroutine
// running there) could. Each event says where it may fire (`add_event`'s `where`, the `*_at`
// masks of `channel_spec`: at::step, at::release_grant, ...); one allowed only between steps
// adds no choice at a hook, so a scenario that allows none at hooks explores exactly the
// schedules it did before hooks existed. A run is a sequence of choices: `explore()` enumerates
// every sequence up to a depth bound (stateless DFS: replay a prefix, then take option 0), then
// runs N seeded random schedules, and checks every run:
//
// - exactly-once: every value created has exactly one fate: received once, handed back to its
//   producer by a failed send (the very same value), or destroyed by the channel; a value whose
//   send succeeded may be destroyed only once no receiver remains;
// - FIFO per producer: each consumer sees a producer's values in order, and so does the
//   channel's order of taking values (the moment a value leaves the buffer or is granted);
// - no barging: a value accepted by a `try_send` while a send was waiting does not leave the
//   channel before that send's value (rule 2, FIFO of waiting senders);
// - strict capacity, at every step: values buffered plus values granted to receivers that have
//   not run yet never exceed the capacity, and `size()` equals the values buffered;
// - no lost wake-up, at every step: a receiver waits only while nothing is buffered and a
//   sender remains; a sender waits only while no slot is free and a receiver remains; no
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
// A destroy event fires only for a coroutine that is really suspended: linked in an operation
// nobody has completed yet, notified through the executor and not yet run, or queued on the
// trampoline; never one on the call stack (running, or inside its own await_suspend) nor one
// whose completion is being notified at that moment (another thread must not destroy it then:
// docs/design.md, known limits). An actor may destroy another suspended one itself.
//
// To follow inline resumption the explorer reads the waiter node inside each operation's
// awaitable (its state) and, at the *_before_link point, wraps its notification function, so
// it knows when a waiter is notified, when it is queued on the trampoline, and when it resumes.
//
// A failing run prints its choice sequence; `cochan_explore --replay 'name:choices'` runs it
// again, printing every step and every choice made at a hook point. A crash (ASan, UBSan, a
// failed assertion) prints it too. Single-threaded: the channel's lock is never contended,
// and every thread of the model shares one trampoline.
#pragma once

// ---- interleaving points: defined before any cochan header ------------------------------------

#ifdef COCHAN_DETAIL_INTERLEAVE
#error "explore/explorer.hpp defines COCHAN_DETAIL_INTERLEAVE: include it before any cochan header"
#endif

namespace cochan_explore {

/// The library's interleaving points, named as in `COCHAN_DETAIL_INTERLEAVE(point)`.
enum class hook_point : unsigned char {
    release_grant,     // competing_queue::release_grant: a slot is free, no sender admitted yet
    trampoline_queued, // trampoline::resume: a woken waiter was queued instead of resumed
    recv_before_link,  // recv_awaitable::await_suspend: stop callback registered, not linked
    send_before_link,  // send_awaitable::await_suspend: likewise
};

/// Runs at every interleaving point (see run_state::at_hook); nothing outside a run.
inline void interleave(hook_point point) noexcept;

} // namespace cochan_explore

// One translation unit (scenarios.cpp) includes this header first: every cochan header in
// cochan_explore sees this definition.
#define COCHAN_DETAIL_INTERLEAVE(point)                                                            \
    ::cochan_explore::interleave(::cochan_explore::hook_point::point)

#include <cochan/cochan.hpp>

#include "support/counted.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <coroutine>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define COCHAN_EXPLORE_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define COCHAN_EXPLORE_SANITIZER 1
#endif
#ifdef COCHAN_EXPLORE_SANITIZER
#include <sanitizer/common_interface_defs.h>
#endif

namespace cochan_explore {

using cochan::detail::wait_state;
using cochan::detail::waiter_base;
using cochan_test::counted;

inline const char* hook_name(hook_point p) noexcept {
    switch (p) {
    case hook_point::release_grant: return "release_grant";
    case hook_point::trampoline_queued: return "trampoline_queued";
    case hook_point::recv_before_link: return "recv_before_link";
    case hook_point::send_before_link: return "send_before_link";
    }
    return "?";
}

/// Where an event may fire: between two steps, and at the hook points named.
using where_mask = unsigned;
namespace at {
inline constexpr where_mask step = 1U;
constexpr where_mask hook(hook_point p) noexcept {
    return 2U << static_cast<unsigned>(p);
}
inline constexpr where_mask release_grant = hook(hook_point::release_grant);
inline constexpr where_mask trampoline_queued = hook(hook_point::trampoline_queued);
inline constexpr where_mask recv_before_link = hook(hook_point::recv_before_link);
inline constexpr where_mask send_before_link = hook(hook_point::send_before_link);
inline constexpr where_mask before_link = recv_before_link | send_before_link;
inline constexpr where_mask hooks = release_grant | trampoline_queued | before_link;
} // namespace at

/// The waiter node inside a channel operation's awaitable. The awaitables derive from it
/// privately; a C-style cast is the one conversion to an inaccessible base ([expr.cast]/4).
/// The explorer reads its `state_` and wraps its `notify_` (run_state::at_hook).
template <class Op> waiter_base* waiter_of(Op& op) noexcept {
    // NOLINTNEXTLINE(google-readability-casting): static_cast cannot reach a private base
    return (waiter_base*)std::addressof(op);
}

// ---- choice sequences -------------------------------------------------------------------------

/// The choices of one run: a prefix replayed first, then option 0 (DFS) or a random option.
struct schedule {
    std::vector<std::uint8_t> prefix;
    std::optional<std::mt19937_64> rng;
    std::vector<std::uint8_t> taken;   // the option chosen at each step
    std::vector<std::uint8_t> options; // among how many
    bool prefix_mismatch = false;      // a replayed choice did not exist (wrong scenario?)

    std::size_t pick(std::size_t n) {
        std::size_t c = 0;
        const std::size_t i = taken.size();
        if (i < prefix.size()) {
            c = prefix[i];
            if (c >= n) {
                prefix_mismatch = true;
                c = 0;
            }
        } else if (rng) {
            c = static_cast<std::size_t>((*rng)() % n);
        }
        taken.push_back(static_cast<std::uint8_t>(c));
        options.push_back(static_cast<std::uint8_t>(n));
        return c;
    }
};

/// "0.1.0*5.2": choices separated by dots, a run of k equal choices written c*k.
inline std::string format_choices(const std::vector<std::uint8_t>& c) {
    std::string s;
    for (std::size_t i = 0; i < c.size();) {
        std::size_t j = i;
        while (j < c.size() && c[j] == c[i]) ++j;
        if (!s.empty()) s += '.';
        s += std::to_string(c[i]);
        if (j - i > 1) s += '*' + std::to_string(j - i);
        i = j;
    }
    return s;
}

inline std::vector<std::uint8_t> parse_choices(const std::string& s) {
    std::vector<std::uint8_t> c;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, '.')) {
        if (item.empty()) continue;
        const auto star = item.find('*');
        const int value = std::stoi(item.substr(0, star));
        const int count = star == std::string::npos ? 1 : std::stoi(item.substr(star + 1));
        if (value < 0 || value > 255 || count < 1)
            throw std::invalid_argument("bad choice " + item);
        c.insert(c.end(), static_cast<std::size_t>(count), static_cast<std::uint8_t>(value));
    }
    return c;
}

// ---- crash reporting --------------------------------------------------------------------------

// What a crash handler prints: the scenario and the choices so far. Written by the explorer
// before each step; read only by the handlers.
struct crash_context {
    const char* scenario = nullptr;
    const std::vector<std::uint8_t>* taken = nullptr;
};
inline crash_context g_crash;

inline void write_raw(const char* s) {
    (void)!::write(2, s, std::strlen(s));
}

/// Prints the replay command of the run in progress. Async-signal-safe enough for a dying
/// process: no allocation, only write(2).
inline void print_crash_trace() noexcept {
    if (g_crash.scenario == nullptr || g_crash.taken == nullptr) return;
    write_raw("\ncochan_explore: the run crashed; replay it with:\n  cochan_explore --replay '");
    write_raw(g_crash.scenario);
    write_raw(":");
    const auto& c = *g_crash.taken;
    char buf[8];
    for (std::size_t i = 0; i < c.size(); ++i) {
        int n = 0;
        unsigned v = c[i];
        char digits[4];
        do {
            digits[n++] = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v != 0);
        int k = 0;
        if (i != 0) buf[k++] = '.';
        while (n > 0) buf[k++] = digits[--n];
        buf[k] = '\0';
        write_raw(buf);
    }
    write_raw("'\n");
}

inline void on_fatal_signal(int sig) {
    print_crash_trace();
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

inline void install_crash_handlers() {
#ifdef COCHAN_EXPLORE_SANITIZER
    __sanitizer_set_death_callback([] { print_crash_trace(); });
#endif
    std::signal(SIGABRT, on_fatal_signal); // COCHAN_ASSERT, std::terminate
    std::signal(SIGSEGV, on_fatal_signal); // without a sanitizer; ASan installs its own
    std::signal(SIGBUS, on_fatal_signal);
}

// ---- the run in progress ----------------------------------------------------------------------

class run_state;
// The run in progress. Payload constructors and coroutine frames report to it; one run at a
// time, on one thread.
inline run_state* g_run = nullptr;

/// An actor's coroutine: lazy (the explorer starts it as a choice like any other), reports its
/// end to the run (which destroys its frame there and then: an inline actor may finish inside
/// another coroutine's operation), and records where its frame lives so the capacity check can
/// tell a value held by an actor from a value held by the channel.
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

        std::exception_ptr error;
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
    bool was_oldest = false;     // when notified, it was the oldest waiter of its side
    // The current operation: its waiter node (inside the awaitable, in the frame), a serial
    // number, whether it suspended, and whether a stop landed before it linked.
    waiter_base* waiter = nullptr;
    std::uint64_t op_serial = 0;
    std::uint64_t linking_mark = 0; // run_state::foreign_runs_ when it began linking
    bool op_suspended = false;
    bool stopped_before_link = false;
    std::stop_source stop;
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

/// Where a value is and what became of it.
struct value_record {
    int producer = 0;
    int seq = 0;
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
/// tracked: the run always knows which object carries each value. Move-only.
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

template <class Op> struct tracked;

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

/// One run of one scenario: the channel's observers, the actors, the pending events, the
/// ready queue the explorer picks from, and the ledger of values.
class run_state {
  public:
    run_state(schedule& s, bool verbose) : schedule_(s), verbose_(verbose) {
        counted::reset();
        g_run = this;
    }
    run_state(const run_state&) = delete;
    run_state& operator=(const run_state&) = delete;
    ~run_state() {
        cleanup();
        g_run = nullptr;
    }

    // ---- set-up ---------------------------------------------------------------------------

    /// The channel as the checks see it: its capacity (0: unbounded), its buffered size, and
    /// how to let go of the reference the harness holds for those queries.
    void observe_channel(std::size_t capacity, std::function<std::size_t()> size,
                         std::function<void()> release) {
        capacity_ = capacity;
        channel_size_ = std::move(size);
        cleanups_.push_back(std::move(release));
    }

    int& live_senders() noexcept { return live_tx_; }
    actor_info& actor(int i) { return actors_[static_cast<std::size_t>(i)]; }
    int& live_receivers() noexcept { return live_rx_; }

    actor_info& add_actor(std::string name, int producer) {
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
            harness_ = &add_actor("H", producers_);
            harness_->state = actor_state::finished;
            harness_->op = "harness";
        }
        return *harness_;
    }

    /// Adopts the actor's coroutine (created suspended) and makes its start a choice.
    void start(actor_info& a, actor_task t) {
        a.handle = t.handle;
        a.frame_begin = last_frame_begin_;
        a.frame_end = last_frame_end_;
        a.state = actor_state::ready;
        ready_.push_back(&a);
    }

    /// An event the explorer may fire once, while `enabled()`: between two steps (at::step)
    /// and/or at the hook points in `where`.
    void add_event(std::string label, std::function<bool()> enabled, std::function<void()> fire,
                   where_mask where = at::step) {
        if (events_.size() == max_events) throw std::length_error("too many events");
        events_.push_back({std::move(label), std::move(enabled), std::move(fire), where, false});
    }

    /// Something to undo after the run (an endpoint the harness holds), in reverse order.
    void on_cleanup(std::function<void()> f) { cleanups_.push_back(std::move(f)); }

    /// Whether an event may destroy `a` now: really suspended, and not being completed.
    bool destroyable_by_event(const actor_info& a) const noexcept {
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
    bool destroyable_by_actor(const actor_info& a) const noexcept {
        if (!a.handle) return false;
        return a.state == actor_state::in_op || a.state == actor_state::ready ||
               (a.state == actor_state::notified && a.queued);
    }

    /// The actor's frame (and every awaitable in it) is destroyed now.
    void destroy_actor(actor_info& a) {
        std::erase(ready_, &a);
        const auto h = std::exchange(a.handle, {});
        a.state = actor_state::destroyed;
        a.queued = false;
        dying_.push_back({a.frame_begin, a.frame_end, tick()});
        h.destroy();
        dying_.pop_back();
        forget_spies(a);
        a.frame_begin = a.frame_end = nullptr;
    }

    /// `self` destroys `target` if it is suspended (a coroutine destroying another on its
    /// thread, which docs/design.md allows).
    void destroy_by(actor_info& self, int target) {
        actor_info& t = actor(target);
        if (!destroyable_by_actor(t)) {
            note(self.name + ": " + t.name + " is not suspended, left alone");
            return;
        }
        note(self.name + ": destroys " + t.name);
        ++foreign_runs_;
        destroy_actor(t);
    }

    // ---- what actors call -----------------------------------------------------------------

    struct poster {
        run_state* run;
        void operator()(std::coroutine_handle<> h) const { run->post(h); }
    };
    poster executor() noexcept { return poster{this}; }

    struct yield_awaiter {
        run_state* run;
        actor_info* self;
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> h) const {
            self->op = "yield";
            self->op_value = -1;
            self->state = actor_state::yielding;
            run->post(h);
        }
        void await_resume() const noexcept {}
    };
    /// Between two operations: lets the explorer run someone else first.
    yield_awaiter yield(actor_info& self) noexcept { return {this, &self}; }

    /// Before `co_await`ing a channel operation (or the gate).
    void begin_op(actor_info& self, const char* what, int value, bool receive, bool gate = false) {
        self.op = what;
        self.op_value = value;
        self.posted = false;
        self.awaiting_recv = receive;
        self.gate_op = gate;
        self.linked_at = tick();
    }

    /// `co_await run.track(self, op)` awaits `op` (a named awaitable) and follows it: when it
    /// links, is notified, is queued on the trampoline and resumes.
    template <class Op> tracked<Op> track(actor_info& self, Op& op) noexcept {
        return {this, &self, &op};
    }

    /// After an operation that completed through a notification with a value or a slot: it
    /// must have been granted to the oldest waiter of its side (FIFO among waiters, rule 2).
    void check_granted_in_order(const actor_info& self) {
        if (!self.was_oldest) {
            fail(self.name + " was granted " + doing(self) +
                 " although an older waiter of its side was waiting (FIFO among waiters)");
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
        return was_posted ? self.posted_at : tick();
    }

    payload new_value(actor_info& producer, int seq) {
        values_.push_back({});
        values_.back().producer = producer.producer;
        values_.back().seq = seq;
        const int id = static_cast<int>(values_.size()) - 1;
        return {id, 1000 * producer.producer + seq};
    }

    std::string doing(const actor_info& a) const {
        return a.op_value >= 0 ? std::string(a.op) + " " + value_name(a.op_value) : a.op;
    }

    std::string value_name(int id) const {
        if (id < 0 || static_cast<std::size_t>(id) >= values_.size())
            return "?" + std::to_string(id);
        const auto& v = values_[static_cast<std::size_t>(id)];
        return value_name(v.producer, v.seq);
    }
    /// "P0#1": the producer's second value; the harness's values are "H#k".
    std::string value_name(int producer, int seq) const {
        const bool mine = harness_ != nullptr && producer == harness_->producer;
        return (mine ? "H" : "P" + std::to_string(producer)) + "#" + std::to_string(seq);
    }

    void sent(actor_info& producer, int id) {
        values_[static_cast<std::size_t>(id)].send_ok = true;
        if (verbose_) note(producer.name + ": sent " + value_name(id));
    }

    /// The values of the sends waiting now (linked, not admitted): a `try_send` about to run
    /// must not get ahead of them.
    std::vector<int> waiting_sends() const {
        std::vector<int> ids;
        for (const auto& a : actors_) {
            if (a.linked() && !a.awaiting_recv && !a.gate_op && a.op_value >= 0)
                ids.push_back(a.op_value);
        }
        return ids;
    }
    /// `id` was accepted by a try_send while the sends of `waiting` waited.
    void accepted_by_try_send(int id, const std::vector<int>& waiting) {
        for (int w : waiting) barging_pairs_.emplace_back(w, id);
    }

    /// A failed send handed the value back: it must be the value that was sent.
    void returned(actor_info& producer, payload& p, int expected, const char* why) {
        kept(producer, p, expected, why);
        const int id = p.settle();
        if (id >= 0) ++values_[static_cast<std::size_t>(id)].returned;
    }

    /// A send handed the value back (failed, cancelled, or a full try_send): it must be the
    /// very value that was sent, intact.
    void kept(actor_info& producer, const payload& p, int expected, const char* why) {
        if (p.id() != expected) {
            fail(producer.name + ": " + why + " handed back " + value_name(p.id()) +
                 " instead of " + value_name(expected));
        } else if (p.content() != expected_content(expected)) {
            fail(producer.name + ": " + why + " handed back " + value_name(expected) + " altered");
        }
        if (verbose_) note(producer.name + ": " + why + ", " + value_name(expected) + " back");
    }

    void received(actor_info& consumer, payload& p, std::uint64_t taken_at) {
        const int id = p.id();
        if (id < 0 || static_cast<std::size_t>(id) >= values_.size()) {
            fail(consumer.name + " received a moved-from or settled value");
            return;
        }
        if (p.content() != expected_content(id)) {
            fail(consumer.name + " received " + value_name(id) + " with altered content");
        }
        auto& v = values_[static_cast<std::size_t>(id)];
        p.settle();
        ++v.received;
        v.taken_at = taken_at;
        if (verbose_) note(consumer.name + ": received " + value_name(id));
        if (consumer.last_seq.size() < static_cast<std::size_t>(producers_)) {
            consumer.last_seq.resize(static_cast<std::size_t>(producers_), -1);
        }
        int& last = consumer.last_seq[static_cast<std::size_t>(v.producer)];
        if (v.seq <= last && !v.handed_back) {
            fail(consumer.name + " received " + value_name(id) + " after " +
                 value_name(v.producer, last) + " (FIFO)");
        }
        last = std::max(last, v.seq);
    }

    /// A receive saw `disconnected`: every sender is gone and nothing is buffered (a value
    /// handed back by a destroyed receiver may arrive later: docs/design.md, known limits).
    void saw_disconnected(actor_info& consumer) {
        if (verbose_) note(consumer.name + ": disconnected");
        if (live_tx_ != 0) {
            fail(consumer.name + " saw disconnected while " + std::to_string(live_tx_) +
                 " sender(s) remain");
        }
        if (!any_handed_back_ && channel_size_() != 0) {
            fail(consumer.name + " saw disconnected with " + std::to_string(channel_size_()) +
                 " value(s) buffered");
        }
    }

    void saw_cancelled(actor_info& self) {
        if (verbose_) note(self.name + ": cancelled");
        if (!self.stop.stop_requested()) fail(self.name + " was cancelled without a stop request");
        self.use_token = false; // later operations run without a token
    }

    /// A stop request on `a`'s token (an event). If it lands while `a` is about to link an
    /// operation that carries the token, that operation must complete `cancelled` at once.
    void stop_actor(actor_info& a) {
        if (a.state == actor_state::linking && !a.gate_op && a.waiter != nullptr &&
            a.waiter->state_ == wait_state::idle) {
            a.stopped_before_link = true;
        }
        a.stop.request_stop();
    }

    /// The clock: every step, notification and immediate take gets the next tick.
    std::uint64_t now() noexcept { return tick(); }

    bool verbose() const noexcept { return verbose_; }
    void note(const std::string& what) {
        if (verbose_) std::printf("      %s\n", what.c_str());
    }

    void fail(const std::string& what) {
        if (failure_.empty()) failure_ = what;
        if (verbose_) std::printf("  !!! %s\n", what.c_str());
    }
    const std::string& failure() const noexcept { return failure_; }

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
            fail("the explorer lost track of " + a.name + "'s await_suspend");
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
            fail(a.name + ": a stop requested before its " + doing(a) +
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
            note(a.name + " resumes inline (" + doing(a) + ")");
            break;
        default:
            fail(a.name + " resumed without a notification (" + doing(a) + ")");
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
                    fail(a->name + " threw: " + e.what());
                } catch (...) {
                    fail(a->name + " threw");
                }
            }
            forget_spies(*a);
            a->handle = {};
            a->frame_begin = a->frame_end = nullptr;
            a->state = actor_state::finished;
            a->op = "finished";
            a->op_value = -1;
        } else {
            fail("a coroutine that belongs to no actor finished");
        }
        h.destroy();
    }

    /// At each COCHAN_DETAIL_INTERLEAVE point: the bookkeeping of inline resumption, then (in
    /// a run) a choice: continue, or first fire one of the events allowed here.
    void at_hook(hook_point p) {
        actor_info* linker = nullptr; // the actor about to link, at a *_before_link point
        switch (p) {
        case hook_point::recv_before_link:
        case hook_point::send_before_link:
            if (linking_.empty()) {
                fail(std::string("an operation the explorer does not follow reached ") +
                     hook_name(p));
            } else {
                linker = linking_.back();
                if (linker->inline_resume || linker->gate_op) install_spy(*linker);
            }
            break;
        case hook_point::trampoline_queued:
            if (notifying_.empty() || notifying_.back()->state != actor_state::notified) {
                fail("a waiter the explorer does not follow was queued on the trampoline");
            } else {
                notifying_.back()->queued = true;
                note("queued on the trampoline: " + notifying_.back()->name);
            }
            break;
        case hook_point::release_grant: break;
        }
        if (executing_ && failure_.empty()) choose_at(p);
        // Not linked yet: whatever ran here cannot have completed the operation, so a
        // notification before it links again comes from the library itself (mark_notified).
        if (linker != nullptr) linker->linking_mark = foreign_runs_;
    }

    // ---- hooks for payloads and frames ------------------------------------------------------

    void value_created(int id, const payload* p) {
        values_[static_cast<std::size_t>(id)].where = p;
    }
    void value_moved(int id, const payload* from, const payload* to) {
        auto& v = values_[static_cast<std::size_t>(id)];
        v.where = to;
        for (const auto& d : dying_) {
            const char* c = reinterpret_cast<const char*>(from);
            if (c >= d.begin && c < d.end) {
                // Out of a frame being destroyed: a granted receiver handing its value back.
                // Known limit: such a value may come after newer ones.
                v.handed_back = true;
                v.handed_back_at = d.at;
                any_handed_back_ = true;
            }
        }
    }
    void value_destroyed(int id) {
        auto& v = values_[static_cast<std::size_t>(id)];
        v.where = nullptr;
        ++v.destroyed;
        v.live_rx_at_destroy = live_rx_;
        if (verbose_) {
            note("destroyed " + value_name(id) + " (" + std::to_string(live_rx_) +
                 " receiver(s) left)");
        }
    }
    void value_settled(int id) { values_[static_cast<std::size_t>(id)].where = nullptr; }
    void frame_allocated(void* p, std::size_t n) {
        last_frame_begin_ = static_cast<const char*>(p);
        last_frame_end_ = last_frame_begin_ + n;
    }

    // ---- the run ----------------------------------------------------------------------------

    /// Runs the scenario to the end under `schedule_`'s choices; then checks the end state.
    void execute(const char* scenario_name) {
        g_crash.scenario = scenario_name;
        g_crash.taken = &schedule_.taken;
        constexpr std::size_t max_steps = 4000;
        executing_ = true;
        for (std::size_t step = 0; failure_.empty(); ++step) {
            check_step();
            if (!failure_.empty()) break;
            enabled_.clear();
            for (auto& e : events_) {
                if (!e.fired && (e.where & at::step) != 0 && e.enabled()) enabled_.push_back(&e);
            }
            const std::size_t n = ready_.size() + enabled_.size();
            if (n == 0) break;
            if (step == max_steps) {
                fail("no end after " + std::to_string(max_steps) + " steps (livelock?)");
                break;
            }
            const std::size_t c = schedule_.pick(n);
            if (c < ready_.size()) {
                actor_info* a = ready_[c];
                ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(c));
                if (verbose_) {
                    std::printf("  #%zu [%zu/%zu] run %s%s\n", step, c, n, a->name.c_str(),
                                (" (after " + doing(*a) + ")").c_str());
                }
                resume(*a);
                if (verbose_ && a->state == actor_state::in_op)
                    note(a->name + ": waits in " + doing(*a));
            } else {
                event* e = enabled_[c - ready_.size()];
                if (verbose_)
                    std::printf("  #%zu [%zu/%zu] event: %s\n", step, c, n, e->label.c_str());
                fire(*e);
            }
        }
        executing_ = false;
        if (schedule_.prefix_mismatch) fail("the replayed choices do not fit this scenario");
        if (failure_.empty()) check_end();
        cleanup();
        if (failure_.empty() && counted::live() != 0) {
            fail(std::to_string(counted::live()) + " value object(s) leaked after the run");
        }
        g_crash = {};
    }

    static void spy_notify(waiter_base* w) noexcept;

  private:
    static constexpr std::size_t max_events = 16;

    struct event {
        std::string label;
        std::function<bool()> enabled;
        std::function<void()> fire;
        where_mask where;
        bool fired;
    };
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

    static int expected_content(int id);

    /// The choice at a hook point: continue (option 0), or fire one of the events allowed
    /// there first, then choose again.
    void choose_at(hook_point p) {
        const where_mask here = at::hook(p);
        for (;;) {
            std::array<event*, max_events> enabled{};
            std::size_t n = 0;
            for (auto& e : events_) {
                if (!e.fired && (e.where & here) != 0 && e.enabled()) enabled[n++] = &e;
            }
            if (n == 0) return;
            const std::size_t c = schedule_.pick(n + 1);
            if (verbose_) {
                std::printf("      @%s [%zu/%zu] %s\n", hook_name(p), c, n + 1,
                            c == 0 ? "continue" : enabled[c - 1]->label.c_str());
            }
            if (c == 0) return;
            fire(*enabled[c - 1]);
        }
    }

    std::uint64_t tick() noexcept { return clock_++; }

    void fire(event& e) {
        e.fired = true;
        ++foreign_runs_;
        tick();
        e.fire();
    }

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
                fail(a.name + " was notified from inside its own await_suspend (" + doing(a) + ")");
                return false;
            }
        } else if (a.state != actor_state::in_op) {
            // Notified twice, notified while running, or notified without waiting: each would
            // resume the coroutine twice.
            fail(a.name + " was notified while " + state_word(a) + " (" + doing(a) + ")");
            return false;
        }
        a.was_oldest = true;
        if (!a.gate_op) {
            for (const auto& other : actors_) {
                if (&other != &a && other.linked() && !other.gate_op &&
                    other.awaiting_recv == a.awaiting_recv && other.linked_at < a.linked_at) {
                    a.was_oldest = false;
                }
            }
        }
        a.state = next;
        a.posted = true;
        a.posted_at = tick();
        if (verbose_) note("notify " + a.name + " (" + doing(a) + ")");
        return true;
    }

    void post(std::coroutine_handle<> h) {
        actor_info* a = owner_of(h);
        if (a == nullptr) {
            fail("a handle that belongs to no live actor was posted");
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

    void inline_notify(waiter_base* w) {
        const auto it = std::find_if(spies_.begin(), spies_.end(),
                                     [w](const spy_entry& e) { return e.waiter == w; });
        if (it == spies_.end()) {
            fail("a waiter was notified twice, or without waiting");
            return; // not resumed: resuming it would do worse
        }
        const spy_entry e = *it;
        spies_.erase(it);
        if (!mark_notified(*e.actor, actor_state::notified)) return;
        notifying_.push_back(e.actor);
        e.original(w); // the library's notification: resume at once, or queue (trampoline)
        notifying_.pop_back();
    }

    void resume(actor_info& a) {
        a.state = actor_state::running;
        a.handle.resume(); // a finished actor's frame is destroyed inside (finished())
        if (a.state == actor_state::running || a.state == actor_state::linking)
            fail(a.name + " suspended outside the explorer's control");
    }

    /// The invariants that hold between any two steps.
    void check_step() {
        std::size_t buffered = 0;
        std::size_t granted = 0;
        for (const auto& value : values_) {
            const void* w = value.where;
            if (w == nullptr) continue;
            const actor_info* holder = nullptr;
            for (const auto& a : actors_) {
                if (a.contains(w)) holder = &a;
            }
            if (holder == nullptr) {
                ++buffered; // neither in a producer's hands nor in a consumer's: in the buffer
            } else if (holder->awaiting_recv) {
                ++granted; // in the receive slot of a consumer that has not taken it yet
            }
        }
        const std::size_t size = channel_size_();
        if (size != buffered) {
            fail("size() is " + std::to_string(size) + " but " + std::to_string(buffered) +
                 " value(s) are buffered");
        }
        if (capacity_ != 0 && buffered + granted > capacity_) {
            fail("capacity " + std::to_string(capacity_) + " exceeded: " +
                 std::to_string(buffered) + " buffered + " + std::to_string(granted) + " granted");
        }
        for (const auto& a : actors_) {
            if (a.state == actor_state::running || a.state == actor_state::linking) {
                fail(a.name + " is neither suspended nor finished between two steps");
            } else if (a.state == actor_state::notified) {
                fail(a.name + " was woken but is left queued on the trampoline (lost wake-up)");
            }
            if (a.state != actor_state::in_op) continue;
            if (!a.linked()) {
                fail(a.name + "'s " + doing(a) + " completed but it was never notified " +
                     "(lost wake-up)");
                continue;
            }
            if (a.gate_op) continue;
            if (a.awaiting_recv) {
                if (buffered != 0) {
                    fail(a.name + " waits to receive while " + std::to_string(buffered) +
                         " value(s) are buffered (lost wake-up)");
                }
                if (live_tx_ == 0) fail(a.name + " waits to receive with no sender left");
            } else {
                if (capacity_ != 0 && buffered + granted < capacity_) {
                    fail(a.name + " waits to send while a slot is free (lost wake-up)");
                }
                if (live_rx_ == 0) fail(a.name + " waits to send with no receiver left");
            }
        }
    }

    /// Once nothing can run: every actor finished, and every value met exactly one fate.
    void check_end() {
        for (const auto& a : actors_) {
            if (a.alive()) fail(a.name + " never completed (left in " + doing(a) + ")");
        }
        std::vector<std::vector<const value_record*>> by_producer(
            static_cast<std::size_t>(producers_));
        for (std::size_t id = 0; id < values_.size(); ++id) {
            const auto& v = values_[id];
            const std::string name = value_name(static_cast<int>(id));
            const int fates = v.received + v.returned + v.destroyed;
            if (fates != 1) {
                fail(name + ": received " + std::to_string(v.received) + ", returned " +
                     std::to_string(v.returned) + ", destroyed " + std::to_string(v.destroyed) +
                     " (each value must meet exactly one fate)");
            }
            if (v.destroyed != 0 && v.send_ok && v.live_rx_at_destroy != 0) {
                fail(name + " was sent, then destroyed while " +
                     std::to_string(v.live_rx_at_destroy) + " receiver(s) remained (lost)");
            }
            const auto& producer = producer_actor(v.producer);
            if (v.destroyed != 0 && !v.send_ok && producer.state == actor_state::finished) {
                fail(name + " was destroyed although its producer never saw its send succeed");
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
                        fail("the channel gave out " + value_name(v->producer, v->seq) +
                             " before " + value_name(u->producer, u->seq) + " (FIFO)");
                    }
                }
            }
        }
        // No barging (rule 2): a value a try_send got in while a send waited leaves the
        // channel after that send's value (both received, neither handed back).
        for (const auto& [w, t] : barging_pairs_) {
            const auto& vw = values_[static_cast<std::size_t>(w)];
            const auto& vt = values_[static_cast<std::size_t>(t)];
            if (vw.received == 0 || vt.received == 0 || vw.handed_back || vt.handed_back) continue;
            if (vt.taken_at < vw.taken_at) {
                fail(value_name(t) + ", accepted by a try_send while the send of " + value_name(w) +
                     " waited, left the channel first (barging past a waiting " + "send)");
            }
        }
    }

    const actor_info& producer_actor(int p) const {
        for (const auto& a : actors_) {
            if (a.producer == p) return a;
        }
        return actors_.front();
    }

    /// Destroys what is left (only after a failure: a clean run leaves nothing), then lets go
    /// of the harness's endpoints and of the channel.
    void cleanup() {
        executing_ = false;
        for (auto& a : actors_) {
            if (a.handle) destroy_actor(a);
        }
        ready_.clear();
        while (!cleanups_.empty()) {
            auto f = std::move(cleanups_.back());
            cleanups_.pop_back();
            f();
        }
    }

    schedule& schedule_;
    bool verbose_;
    bool executing_ = false; // in execute()'s loop: hook points are choices
    std::string failure_;
    std::uint64_t clock_ = 0;
    std::size_t capacity_ = 0;
    std::function<std::size_t()> channel_size_ = [] { return std::size_t{0}; };
    std::vector<std::function<void()>> cleanups_;
    std::deque<actor_info> actors_;
    actor_info* harness_ = nullptr;
    std::vector<actor_info*> ready_;
    std::vector<event> events_;
    std::vector<event*> enabled_;
    std::vector<value_record> values_;
    std::vector<std::pair<int, int>> barging_pairs_; // (waiting send's value, try_send's value)
    int producers_ = 0;
    int live_tx_ = 0;
    int live_rx_ = 0;
    small_stack<actor_info*, 32> linking_;   // actors inside await_suspend, innermost last
    small_stack<actor_info*, 32> notifying_; // inline notifications under way, innermost last
    small_stack<dying_frame, 32> dying_;     // frames being destroyed, innermost last
    std::vector<spy_entry> spies_;           // inline waiters whose notify_ the explorer wraps
    // Code other than the library's own that ran: inline resumptions, events, destructions.
    std::uint64_t foreign_runs_ = 0;
    bool any_handed_back_ = false;
    const char* last_frame_begin_ = nullptr;
    const char* last_frame_end_ = nullptr;
};

/// The awaiter `run.track(self, op)` returns: awaits `op` and reports its protocol. It lives in
/// the coroutine's frame, which may be destroyed as soon as `op` links: nothing after that
/// touches it.
template <class Op> struct tracked {
    run_state* run;
    actor_info* self;
    Op* op;

    bool await_ready() { return op->await_ready(); }
    bool await_suspend(std::coroutine_handle<> h) {
        run_state* r = run;
        actor_info* a = self;
        const std::uint64_t serial = r->begin_linking(*a, waiter_of(*op));
        const bool linked = op->await_suspend(h);
        r->end_linking(*a, serial, linked);
        return linked;
    }
    auto await_resume() {
        run->resumed(*self);
        return op->await_resume();
    }
};

inline void interleave(hook_point point) noexcept {
    if (g_run != nullptr) g_run->at_hook(point);
}

inline void run_state::spy_notify(waiter_base* w) noexcept {
    if (g_run == nullptr) {
        write_raw("cochan_explore: an inline waiter was notified after its run\n");
        std::abort();
    }
    g_run->inline_notify(w);
}

// ---- payload and frame hooks --------------------------------------------------------------

inline int run_state::expected_content(int id) {
    const auto& v = g_run->values_[static_cast<std::size_t>(id)];
    return 1000 * v.producer + v.seq;
}

inline void* actor_task::promise_type::operator new(std::size_t n) {
    void* p = ::operator new(n);
    if (g_run != nullptr) g_run->frame_allocated(p, n);
    return p;
}

inline void actor_task::promise_type::final_awaiter::await_suspend(
    std::coroutine_handle<promise_type> h) const noexcept {
    if (g_run != nullptr) {
        g_run->finished(h);
    } else {
        h.destroy();
    }
}

inline payload::payload(int id, int value) : c_(value), id_(id) {
    g_run->value_created(id, this);
}
inline payload::payload(payload&& other) noexcept
    : c_(std::move(other.c_)), id_(std::exchange(other.id_, -1)) {
    if (id_ >= 0) g_run->value_moved(id_, &other, this);
}
inline payload::~payload() {
    if (id_ >= 0) g_run->value_destroyed(id_);
}
inline int payload::settle() noexcept {
    if (id_ >= 0) g_run->value_settled(id_);
    return std::exchange(id_, -1);
}

// ---- actors ---------------------------------------------------------------------------------

struct producer_script {
    int values = 2;
    bool try_first = false;     // bounded: try_send first, co_await send if it is full
    bool token = false;         // sends carry the actor's stop token until one is cancelled
    int close_after = -1;       // close() after this many values, then send once more (must fail)
    bool close_at_end = false;  // close() before finishing (else the endpoint is just dropped)
    bool inline_resume = false; // sends resume inline (default resumption), not via resume_on
    bool gate = false;          // wait at a gate first, until the "kick" event (inline)
};

struct consumer_script {
    bool try_first = false;     // try_recv first, co_await recv if it is empty
    bool token = false;         // receives carry the actor's stop token until one is cancelled
    int leave_after = -1;       // drop the receiver after this many values (-1: until disconnected)
    bool inline_resume = false; // receives resume inline (default resumption)
    bool gate = false;          // wait at a gate first, until the "kick" event (inline)
    int destroy_on_disconnect = -1; // on `disconnected`, destroy this actor if it is suspended
};

/// Waits at `g` (inline) until the kick event sends to it; the caller then runs inside the
/// trampoline. A macro, because a `co_await` cannot move into a helper function.
#define COCHAN_EXPLORE_PASS_GATE(run, self, g)                                                     \
    if ((g) != nullptr) {                                                                          \
        (run).begin_op(self, "gate", -1, false, true);                                             \
        auto gate_op = (g)->rx->recv();                                                            \
        const auto gate_r = co_await (run).track(self, gate_op);                                   \
        (run).end_op(self);                                                                        \
        if (!gate_r) (run).fail((self).name + ": its gate failed");                                \
        (run).note((self).name + ": through its gate");                                            \
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
        if (seq > 0) co_await run.yield(self);
        if (seq == script.close_after) {
            run.note(self.name + ": close");
            tx.close();
            closed = true;
        }
        std::optional<payload> v;
        v.emplace(run.new_value(self, seq));
        const int id = v->id();
        bool may_try = script.try_first;
        for (;;) {
            std::optional<cochan::send_result<payload>> r;
            if constexpr (bounded) {
                if (may_try) {
                    may_try = false;
                    self.op = "try_send";
                    self.op_value = id;
                    const auto waiting = run.waiting_sends();
                    r.emplace(tx->try_send(std::move(*v)));
                    if (*r) run.accepted_by_try_send(id, waiting);
                    if (!*r && r->error().reason == cochan::send_errc::full) {
                        run.kept(self, r->error().value, id, "try_send full");
                        v.emplace(std::move(r->error().value));
                        continue; // now wait for a slot
                    }
                } else {
                    std::stop_token token;
                    if (self.use_token) token = self.stop.get_token();
                    run.begin_op(self, "send", id, false);
                    const bool stopped_before = token.stop_requested();
                    if (script.inline_resume) {
                        auto op = tx->send(std::move(*v), token);
                        r.emplace(co_await run.track(self, op));
                    } else {
                        auto op = tx->send(std::move(*v), token).resume_on(run.executor());
                        r.emplace(co_await run.track(self, op));
                    }
                    if (*r && run.notified(self)) run.check_granted_in_order(self);
                    const bool cancelled = !*r && r->error().reason == cochan::send_errc::cancelled;
                    if (stopped_before && !cancelled) {
                        run.fail(self.name + ": a send with a stopped token was not cancelled");
                    }
                    if (self.stopped_before_link && (!cancelled || self.op_suspended)) {
                        run.fail(self.name + ": a stop that landed before the send linked did "
                                             "not cancel it at once");
                    }
                    run.end_op(self);
                }
            } else {
                self.op = "send";
                self.op_value = id;
                r.emplace(tx->send(std::move(*v)));
            }
            if (*r) {
                if (closed) run.fail(self.name + ": a send through a closed sender succeeded");
                run.sent(self, id);
                break;
            }
            if (r->error().reason == cochan::send_errc::cancelled) {
                run.saw_cancelled(self);
                run.kept(self, r->error().value, id, "send cancelled");
                v.emplace(std::move(r->error().value));
                co_await run.yield(self);
                continue; // retry the same value, without a token
            }
            if (r->error().reason != cochan::send_errc::disconnected) {
                run.fail(self.name + ": unexpected send error");
            } else if (!closed && run.live_receivers() != 0) {
                run.fail(self.name + ": send failed with disconnected while receivers remain");
            }
            run.returned(self, r->error().value, id, "disconnected");
            stopped = true;
            break;
        }
    }
    if (script.close_at_end && !closed) {
        run.note(self.name + ": close");
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
        if (!first) co_await run.yield(self);
        first = false;
        if (script.try_first) {
            self.op = "try_recv";
            self.op_value = -1;
            auto r = rx->try_recv();
            if (r) {
                run.received(self, *r, run.now());
                ++got;
                continue;
            }
            if (r.error() == cochan::recv_errc::disconnected) {
                run.saw_disconnected(self);
                break;
            }
            if (r.error() != cochan::recv_errc::empty) run.fail(self.name + ": try_recv error");
        }
        std::stop_token token;
        if (self.use_token) token = self.stop.get_token();
        run.begin_op(self, "recv", -1, true);
        const bool stopped_before = token.stop_requested();
        std::optional<cochan::recv_result<payload>> r;
        if (script.inline_resume) {
            auto op = rx->recv(token);
            r.emplace(co_await run.track(self, op));
        } else {
            auto op = rx->recv(token).resume_on(run.executor());
            r.emplace(co_await run.track(self, op));
        }
        if (*r && run.notified(self)) run.check_granted_in_order(self);
        const bool cancelled = !*r && r->error() == cochan::recv_errc::cancelled;
        if (stopped_before && !cancelled) {
            // Decision (docs/design.md): a stopped token cancels even if a value is there.
            run.fail(self.name + ": a receive with a stopped token was not cancelled");
        }
        if (self.stopped_before_link && (!cancelled || self.op_suspended)) {
            run.fail(self.name +
                     ": a stop that landed before the receive linked did not cancel it at once");
        }
        const std::uint64_t taken_at = run.end_op(self);
        if (*r) {
            run.received(self, **r, taken_at);
            ++got;
        } else if (cancelled) {
            run.saw_cancelled(self);
        } else {
            if (r->error() != cochan::recv_errc::disconnected) {
                run.fail(self.name + ": unexpected recv error");
            }
            run.saw_disconnected(self);
            if (script.destroy_on_disconnect >= 0) {
                run.destroy_by(self, script.destroy_on_disconnect);
            }
            break;
        }
    }
    self.op = "finishing";
    self.op_value = -1;
    rx.reset();
}

#undef COCHAN_EXPLORE_PASS_GATE

/// The harness sends a value of its own (`H`): `try_send` on a bounded channel, `send` on an
/// unbounded one. It must not get ahead of a send already waiting (no barging).
template <class Tx> void harness_send(run_state& run, actor_info& h, int seq, Tx& tx) {
    constexpr bool bounded = requires {
        tx.capacity();
    };
    std::optional<payload> v;
    v.emplace(run.new_value(h, seq));
    const int id = v->id();
    const auto waiting = run.waiting_sends();
    std::optional<cochan::send_result<payload>> r;
    if constexpr (bounded) {
        r.emplace(tx.try_send(std::move(*v)));
    } else {
        r.emplace(tx.send(std::move(*v)));
    }
    if (*r) {
        run.sent(h, id);
        run.accepted_by_try_send(id, waiting);
    } else {
        run.returned(h, r->error().value, id,
                     r->error().reason == cochan::send_errc::full ? "try_send full"
                                                                  : "send disconnected");
    }
}

/// The harness takes a value with `try_recv`, if there is one.
template <class Rx> void harness_recv(run_state& run, actor_info& h, Rx& rx) {
    auto r = rx.try_recv();
    if (r) {
        run.received(h, *r, run.now());
    } else {
        run.note(std::string("H: try_recv ") +
                 (r.error() == cochan::recv_errc::empty ? "empty" : "disconnected"));
    }
}

// ---- scenarios ------------------------------------------------------------------------------

/// What a run does: its channel, its actors and its events. Built fresh for every run.
struct scenario {
    std::string name;
    std::string what;                      // one line: what it exercises
    std::function<void(run_state&)> setup; // creates the channel, actors and events
    std::size_t depth = 0;                 // DFS bound
    std::size_t randoms = 0;               // random schedules after the DFS
};

/// A channel scenario: the kind (support/channels.hpp), producers, consumers, and the events
/// the explorer may inject, each between steps (at::step) and/or at the hook points of its
/// `*_at` mask.
struct channel_spec {
    std::size_t capacity = 1;
    std::vector<producer_script> producers;
    std::vector<consumer_script> consumers;
    int spare_receivers = 0;   // receiver clones the harness holds; an event drops each
    int spare_senders = 0;     // (MPMC) sender clones the harness holds; an event ends each
    bool close_spares = false; // the spare senders' event is close() (else: drop)
    where_mask spare_at = at::step;
    std::vector<int> stops; // actors (producers first, then consumers) an event may stop
    where_mask stop_at = at::step;
    std::vector<int> destroys; // actors an event may destroy while suspended
    where_mask destroy_at = at::step;
    int harness_sends = 0; // events: the harness try_sends (send, unbounded) a value of its own
                           // through the first spare sender
    where_mask harness_send_at = at::step;
    int harness_recvs = 0; // events: the harness try_recvs through the first spare receiver
    where_mask harness_recv_at = at::step;
};

template <class Kind> void build(run_state& run, const channel_spec& spec) {
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
        for (std::size_t i = 1; i < n_tx; ++i) senders.emplace_back(tx, run.live_senders());
    }
    senders.emplace_back(std::move(tx), run.live_senders());
    for (std::size_t i = 1; i < n_rx; ++i) receivers.emplace_back(rx, run.live_receivers());
    receivers.emplace_back(std::move(rx), run.live_receivers());

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
        auto& a = run.add_actor("P" + std::to_string(i), static_cast<int>(i));
        a.use_token = spec.producers[i].token; // from the start: a stop may come before it runs
        a.inline_resume = spec.producers[i].inline_resume;
        gate* g = make_gate(spec.producers[i].gate, a);
        run.start(a, produce(run, a, std::move(senders[i]), spec.producers[i], g));
    }
    for (std::size_t i = 0; i < spec.consumers.size(); ++i) {
        auto& a = run.add_actor("C" + std::to_string(i), -1);
        a.use_token = spec.consumers[i].token;
        a.inline_resume = spec.consumers[i].inline_resume;
        gate* g = make_gate(spec.consumers[i].gate, a);
        run.start(a, consume(run, a, std::move(receivers[i]), spec.consumers[i], g));
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
        actor_info* h = &run.harness();
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
        actor_info* a = &run.actor(i);
        // Only while its operations carry the token: a stop after that changes nothing.
        run.add_event(
            "stop " + a->name,
            [a] { return a->alive() && a->use_token && !a->stop.stop_requested(); },
            [r, a] { r->stop_actor(*a); }, spec.stop_at);
    }
    for (int i : spec.destroys) {
        actor_info* a = &run.actor(i);
        // While it waits in an operation, or was notified and has not run yet (a granted
        // receiver, an admitted sender; posted, or queued on the trampoline): the cases the
        // channel must undo.
        run.add_event(
            "destroy " + a->name, [r, a] { return r->destroyable_by_event(*a); },
            [r, a] { r->destroy_actor(*a); }, spec.destroy_at);
    }
}

// ---- the explorer ---------------------------------------------------------------------------

struct explore_result {
    std::size_t dfs_runs = 0;
    std::size_t random_runs = 0;
    bool exhaustive = true; // no DFS run went beyond the depth bound
    std::size_t longest = 0;
    std::size_t failures = 0;
    double seconds = 0;
};

/// Runs one schedule; returns its failure (empty if none). `verbose` prints every step.
inline std::string run_once(const scenario& sc, schedule& s, bool verbose) {
    run_state run(s, verbose);
    sc.setup(run);
    run.execute(sc.name.c_str());
    return run.failure();
}

inline void report_failure(const scenario& sc, const schedule& s, const std::string& failure,
                           const char* how) {
    std::printf("\nFAILED %s (%s): %s\n", sc.name.c_str(), how, failure.c_str());
    const std::string trace = sc.name + ":" + format_choices(s.taken);
    std::printf("  replay: cochan_explore --replay '%s'\n", trace.c_str());
    std::printf("  (or COCHAN_EXPLORE_REPLAY='%s' cochan_explore)\n  trace:\n", trace.c_str());
    schedule again;
    again.prefix = s.taken;
    run_once(sc, again, true);
    std::fflush(stdout);
}

/// Every choice sequence up to `depth` (then option 0), then `randoms` random schedules.
inline explore_result explore(const scenario& sc, std::size_t depth, std::size_t randoms,
                              std::uint64_t seed, std::size_t max_failures = 1) {
    explore_result res;
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::uint8_t> prefix;
    for (;;) {
        schedule s;
        s.prefix = prefix;
        const std::string failure = run_once(sc, s, false);
        ++res.dfs_runs;
        res.longest = std::max(res.longest, s.taken.size());
        if (s.taken.size() > depth) res.exhaustive = false;
        if (!failure.empty()) {
            report_failure(sc, s, failure, "DFS");
            if (++res.failures >= max_failures) break;
        }
        // The next sequence: bump the deepest choice within the bound that has an untried
        // alternative, and drop everything after it.
        std::size_t i = std::min(depth, s.taken.size());
        bool more = false;
        while (i > 0) {
            --i;
            if (s.taken[i] + 1 < s.options[i]) {
                prefix.assign(s.taken.begin(), s.taken.begin() + static_cast<std::ptrdiff_t>(i));
                prefix.push_back(static_cast<std::uint8_t>(s.taken[i] + 1));
                more = true;
                break;
            }
        }
        if (!more) break;
    }
    // Beyond the bound: random schedules. Pointless when the DFS covered every schedule.
    for (std::size_t k = 0; k < randoms && !res.exhaustive && res.failures < max_failures; ++k) {
        schedule s;
        s.rng.emplace(seed + k);
        const std::string failure = run_once(sc, s, false);
        ++res.random_runs;
        res.longest = std::max(res.longest, s.taken.size());
        if (!failure.empty()) {
            report_failure(sc, s, failure, ("random, seed " + std::to_string(seed + k)).c_str());
            ++res.failures;
        }
    }
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return res;
}

} // namespace cochan_explore
