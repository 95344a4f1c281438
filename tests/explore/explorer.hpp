// Deterministic schedule exploration for cochan's channels.
//
// A scenario is a few coroutines ("actors") sharing one channel. Every actor resumes through
// `.resume_on(run.executor())` or yields between operations, so nothing runs unless the
// explorer picks it. At each step the explorer chooses one option among the coroutines that are
// ready and the scenario's pending events (a stop request, dropping or closing an endpoint the
// harness holds, destroying a suspended coroutine). A run is therefore a sequence of choices:
// `explore()` enumerates every sequence up to a depth bound (stateless DFS: replay a prefix,
// then take option 0), then runs N seeded random schedules, and checks every run:
//
// - exactly-once: every value created has exactly one fate: received once, handed back to its
//   producer by a failed send (the very same value), or destroyed by the channel; a value whose
//   send succeeded may be destroyed only once no receiver remains;
// - FIFO per producer: each consumer sees a producer's values in order, and so does the
//   channel's order of taking values (the moment a value leaves the buffer or is granted);
// - strict capacity, at every step: values buffered plus values granted to receivers that have
//   not run yet never exceed the capacity, and `size()` equals the values buffered;
// - no lost wake-up, at every step: a receiver waits only while nothing is buffered and a
//   sender remains; a sender waits only while no slot is free and a receiver remains;
// - every waiter completed: when no coroutine is ready and no event is left, every actor has
//   finished (or was destroyed by an event);
// - no leak: `counted::live() == 0` once the channel is gone, and no coroutine is notified twice.
//
// A failing run prints its choice sequence; `cochan_explore --replay 'name:choices'` runs it
// again, printing every step. A crash (ASan, UBSan, a failed assertion) prints it too.
// Single-threaded: the channel's lock is never contended, but every interleaving of the
// operations' suspension points is a choice.
#pragma once

#include <cochan/cochan.hpp>

#include "support/counted.hpp"

#include <algorithm>
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

using cochan_test::counted;

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

/// An actor's coroutine: lazy (the explorer starts it as a choice like any other), keeps its
/// frame after finishing so the explorer sees it done, and records where its frame lives so the
/// capacity check can tell a value held by an actor from a value held by the channel.
class actor_task {
  public:
    struct promise_type {
        static void* operator new(std::size_t n);
        static void operator delete(void* p) noexcept { ::operator delete(p); }

        actor_task get_return_object() noexcept {
            return actor_task(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        std::suspend_always initial_suspend() const noexcept { return {}; }
        std::suspend_always final_suspend() const noexcept { return {}; }
        void return_void() const noexcept {}
        void unhandled_exception() noexcept { error = std::current_exception(); }

        std::exception_ptr error;
    };

    explicit actor_task(std::coroutine_handle<promise_type> h) noexcept : handle(h) {}
    std::coroutine_handle<promise_type> handle;
};

enum class actor_state : std::uint8_t {
    ready,     // posted: the explorer may resume it (started, yielded, or its operation completed)
    running,   // the explorer resumed it and it has not suspended yet
    in_op,     // suspended in a channel operation, not yet notified
    yielding,  // about to post itself between two operations
    finished,  // its body returned (and its frame was destroyed)
    destroyed, // an event destroyed its frame while it was suspended
};

struct actor_info {
    std::string name;
    int index = 0;     // among all actors
    int producer = -1; // producers: 0.., consumers: -1
    std::coroutine_handle<actor_task::promise_type> handle;
    const char* frame_begin = nullptr; // null once the frame is gone
    const char* frame_end = nullptr;
    actor_state state = actor_state::ready;
    bool awaiting_recv = false;  // suspended in (or just notified from) a receive
    bool posted = false;         // notified during its current operation
    std::uint64_t posted_at = 0; // the clock when it was notified
    std::uint64_t linked_at = 0; // the clock when its current operation began
    bool was_oldest = false;     // when notified, it was the oldest waiter of its side
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
    bool handed_back = false; // moved while a granted receiver's coroutine was being destroyed
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

    /// Adopts the actor's coroutine (created suspended) and makes its start a choice.
    void start(actor_info& a, actor_task t) {
        a.handle = t.handle;
        a.frame_begin = last_frame_begin_;
        a.frame_end = last_frame_end_;
        a.state = actor_state::ready;
        ready_.push_back(&a);
    }

    void add_event(std::string label, std::function<bool()> enabled, std::function<void()> fire) {
        events_.push_back({std::move(label), std::move(enabled), std::move(fire), false});
    }

    /// Something to undo after the run (an endpoint the harness holds), in reverse order.
    void on_cleanup(std::function<void()> f) { cleanups_.push_back(std::move(f)); }

    /// A destroy event: the actor's frame (and every awaitable in it) is destroyed now.
    void destroy_actor(actor_info& a) {

        std::erase(ready_, &a);
        destroying_ = true;
        destroyed_at_ = tick();
        std::exchange(a.handle, {}).destroy();
        destroying_ = false;
        a.frame_begin = a.frame_end = nullptr;
        a.state = actor_state::destroyed;
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

    /// Before `co_await`ing a channel operation.
    void begin_op(actor_info& self, const char* what, int value, bool receive) {
        self.op = what;
        self.op_value = value;
        self.posted = false;
        self.awaiting_recv = receive;
        self.state = actor_state::in_op;
        self.linked_at = tick();
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
        return "P" + std::to_string(v.producer) + "#" + std::to_string(v.seq);
    }

    void sent(actor_info& producer, int id) {
        values_[static_cast<std::size_t>(id)].send_ok = true;
        if (verbose_) note(producer.name + ": sent " + value_name(id));
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
            fail(consumer.name + " received " + value_name(id) + " after P" +
                 std::to_string(v.producer) + "#" + std::to_string(last) + " (FIFO)");
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

    // ---- hooks for payloads and frames ------------------------------------------------------

    void value_created(int id, const payload* p) {
        values_[static_cast<std::size_t>(id)].where = p;
    }
    void value_moved(int id, const payload* to) {
        auto& v = values_[static_cast<std::size_t>(id)];
        v.where = to;
        if (destroying_) {
            // The only moves a coroutine's destruction makes: a granted receiver handing its
            // value back. Known limit: such a value may come after newer ones.
            v.handed_back = true;
            v.handed_back_at = destroyed_at_;
            any_handed_back_ = true;
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
        for (std::size_t step = 0; failure_.empty(); ++step) {
            check_step();
            if (!failure_.empty()) break;
            enabled_.clear();
            for (auto& e : events_) {
                if (!e.fired && e.enabled()) enabled_.push_back(&e);
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
                e->fired = true;
                tick();
                e->fire();
            }
        }
        if (schedule_.prefix_mismatch) fail("the replayed choices do not fit this scenario");
        if (failure_.empty()) check_end();
        cleanup();
        if (failure_.empty() && counted::live() != 0) {
            fail(std::to_string(counted::live()) + " value object(s) leaked after the run");
        }
        g_crash = {};
    }

  private:
    struct event {
        std::string label;
        std::function<bool()> enabled;
        std::function<void()> fire;
        bool fired;
    };

    static int expected_content(int id);

    std::uint64_t tick() noexcept { return clock_++; }

    actor_info* owner_of(std::coroutine_handle<> h) noexcept {
        for (auto& a : actors_) {
            if (a.handle && a.handle.address() == h.address()) return &a;
        }
        return nullptr;
    }

    void post(std::coroutine_handle<> h) {
        actor_info* a = owner_of(h);
        if (a == nullptr) {
            fail("a handle that belongs to no live actor was posted");
            return;
        }
        if (a == running_ && a->state == actor_state::in_op) {
            // The library must never resume a coroutine from inside its own await_suspend.
            fail(a->name + " was notified from inside its own await_suspend (" + doing(*a) + ")");
            return;
        }
        if (a->state == actor_state::yielding) {
            a->state = actor_state::ready;
        } else if (a->state == actor_state::in_op) {
            a->was_oldest = true;
            for (const auto& other : actors_) {
                if (other.state == actor_state::in_op && other.awaiting_recv == a->awaiting_recv &&
                    other.linked_at < a->linked_at) {
                    a->was_oldest = false;
                }
            }
            a->state = actor_state::ready;
            a->posted = true;
            a->posted_at = tick();
            if (verbose_) note("notify " + a->name + " (" + doing(*a) + ")");
        } else {
            // Notified twice, notified while running (from inside its own await_suspend), or
            // notified without waiting: each would resume the coroutine twice.
            fail(a->name + " was notified while " +
                 (a->state == actor_state::ready     ? std::string("already notified")
                  : a->state == actor_state::running ? std::string("running")
                                                     : std::string("not waiting")) +
                 " (" + doing(*a) + ")");
            return;
        }
        ready_.push_back(a);
    }

    void resume(actor_info& a) {
        a.state = actor_state::running;
        running_ = &a;
        a.handle.resume();
        running_ = nullptr;
        if (a.handle.done()) {
            if (a.handle.promise().error) {
                try {
                    std::rethrow_exception(a.handle.promise().error);
                } catch (const std::exception& e) {
                    fail(a.name + " threw: " + e.what());
                } catch (...) {
                    fail(a.name + " threw");
                }
            }
            std::exchange(a.handle, {}).destroy();
            a.frame_begin = a.frame_end = nullptr;
            a.state = actor_state::finished;
            a.op = "finished";
            a.op_value = -1;
        } else if (a.state == actor_state::running) {
            fail(a.name + " suspended outside the explorer's control");
        }
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
            if (a.state != actor_state::in_op) continue;
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
                        fail("the channel gave out P" + std::to_string(v->producer) + "#" +
                             std::to_string(v->seq) + " before P" + std::to_string(u->producer) +
                             "#" + std::to_string(u->seq) + " (FIFO)");
                    }
                }
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
        for (auto& a : actors_) {
            if (a.handle) {
                std::exchange(a.handle, {}).destroy();
                a.frame_begin = a.frame_end = nullptr;
            }
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
    std::string failure_;
    std::uint64_t clock_ = 0;
    std::size_t capacity_ = 0;
    std::function<std::size_t()> channel_size_ = [] { return std::size_t{0}; };
    std::vector<std::function<void()>> cleanups_;
    std::deque<actor_info> actors_;
    std::vector<actor_info*> ready_;
    std::vector<event> events_;
    std::vector<event*> enabled_;
    std::vector<value_record> values_;
    int producers_ = 0;
    int live_tx_ = 0;
    int live_rx_ = 0;
    actor_info* running_ = nullptr;
    bool destroying_ = false;
    std::uint64_t destroyed_at_ = 0;
    bool any_handed_back_ = false;
    const char* last_frame_begin_ = nullptr;
    const char* last_frame_end_ = nullptr;
};

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

inline payload::payload(int id, int value) : c_(value), id_(id) {
    g_run->value_created(id, this);
}
inline payload::payload(payload&& other) noexcept
    : c_(std::move(other.c_)), id_(std::exchange(other.id_, -1)) {
    if (id_ >= 0) g_run->value_moved(id_, this);
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
    bool try_first = false;    // bounded: try_send first, co_await send if it is full
    bool token = false;        // sends carry the actor's stop token until one is cancelled
    int close_after = -1;      // close() after this many values, then send once more (must fail)
    bool close_at_end = false; // close() before finishing (else the endpoint is just dropped)
};

struct consumer_script {
    bool try_first = false; // try_recv first, co_await recv if it is empty
    bool token = false;     // receives carry the actor's stop token until one is cancelled
    int leave_after = -1;   // drop the receiver after this many values (-1: until disconnected)
};

/// Sends `script.values` values, retrying one whose send was cancelled, stopping at the first
/// send that fails with `disconnected`.
template <class Tx>
actor_task produce(run_state& run, actor_info& self, held<Tx> tx, producer_script script) {
    constexpr bool bounded = requires {
        tx->capacity();
    };
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
                    r.emplace(tx->try_send(std::move(*v)));
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
                    r.emplace(co_await tx->send(std::move(*v), token).resume_on(run.executor()));
                    if (*r && run.notified(self)) run.check_granted_in_order(self);
                    if (stopped_before &&
                        (*r || r->error().reason != cochan::send_errc::cancelled)) {
                        run.fail(self.name + ": a send with a stopped token was not cancelled");
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
actor_task consume(run_state& run, actor_info& self, held<Rx> rx, consumer_script script) {
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
        auto r = co_await rx->recv(token).resume_on(run.executor());
        if (r && run.notified(self)) run.check_granted_in_order(self);
        if (stopped_before && (r || r.error() != cochan::recv_errc::cancelled)) {
            // Decision (docs/design.md): a stopped token cancels even if a value is there.
            run.fail(self.name + ": a receive with a stopped token was not cancelled");
        }
        const std::uint64_t taken_at = run.end_op(self);
        if (r) {
            run.received(self, *r, taken_at);
            ++got;
        } else if (r.error() == cochan::recv_errc::cancelled) {
            run.saw_cancelled(self);
        } else {
            if (r.error() != cochan::recv_errc::disconnected) {
                run.fail(self.name + ": unexpected recv error");
            }
            run.saw_disconnected(self);
            break;
        }
    }
    self.op = "finishing";
    self.op_value = -1;
    rx.reset();
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
/// the explorer may inject at any step.
struct channel_spec {
    std::size_t capacity = 1;
    std::vector<producer_script> producers;
    std::vector<consumer_script> consumers;
    int spare_receivers = 0;   // receiver clones the harness holds; an event drops each
    int spare_senders = 0;     // (MPMC) sender clones the harness holds; an event ends each
    bool close_spares = false; // the spare senders' event is close() (else: drop)
    std::vector<int> stops;    // actors (producers first, then consumers) an event may stop
    std::vector<int> destroys; // actors an event may destroy while suspended
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

    for (std::size_t i = 0; i < spec.producers.size(); ++i) {
        auto& a = run.add_actor("P" + std::to_string(i), static_cast<int>(i));
        a.use_token = spec.producers[i].token; // from the start: a stop may come before it runs
        run.start(a, produce(run, a, std::move(senders[i]), spec.producers[i]));
    }
    for (std::size_t i = 0; i < spec.consumers.size(); ++i) {
        auto& a = run.add_actor("C" + std::to_string(i), -1);
        a.use_token = spec.consumers[i].token;
        run.start(a, consume(run, a, std::move(receivers[i]), spec.consumers[i]));
    }
    for (std::size_t i = spec.producers.size(); i < senders.size(); ++i) {
        auto spare = std::make_shared<held<Tx>>(std::move(senders[i]));
        const bool close = spec.close_spares;
        run.add_event((close ? "close" : "drop") + std::string(" tx clone"),
                      [spare] { return spare->connected(); },
                      [spare, close] {
                          if (close) {
                              spare->close();
                          } else {
                              spare->reset();
                          }
                      });
        run.on_cleanup([spare] { spare->reset(); });
    }
    for (std::size_t i = spec.consumers.size(); i < receivers.size(); ++i) {
        auto spare = std::make_shared<held<Rx>>(std::move(receivers[i]));
        run.add_event(
            "drop rx clone", [spare] { return spare->alive(); }, [spare] { spare->reset(); });
        run.on_cleanup([spare] { spare->reset(); });
    }
    for (int i : spec.stops) {
        actor_info* a = &run.actor(i);
        // Only while its operations carry the token: a stop after that changes nothing.
        run.add_event(
            "stop " + a->name,
            [a] { return a->alive() && a->use_token && !a->stop.stop_requested(); },
            [a] { a->stop.request_stop(); });
    }
    for (int i : spec.destroys) {
        actor_info* a = &run.actor(i);
        run_state* r = &run;
        // While it waits in an operation, or was notified and has not run yet (a granted
        // receiver, an admitted sender): the cases the channel must undo.
        run.add_event(
            "destroy " + a->name,
            [a] {
                return a->state == actor_state::in_op ||
                       (a->state == actor_state::ready && a->posted);
            },
            [r, a] { r->destroy_actor(*a); });
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
