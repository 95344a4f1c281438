// The library's interleaving points and the choices the explorer makes there: the definition
// of COCHAN_DETAIL_INTERLEAVE (so it must come before any cochan header), the hook points, the
// masks saying where an event may fire (between steps, at which hook points), and the table of
// a run's events with the choice made at a hook point: continue, or first fire one of the
// events allowed there, as another thread (or the coroutine running there) could.
//
// An event allowed only between steps adds no choice at a hook, so a scenario that allows none
// at hooks explores exactly the schedules it did before hooks existed.
#pragma once

#ifdef COCHAN_DETAIL_INTERLEAVE
// A cochan header came first: it defined the macro as a no-op, and every hook point in it is
// lost to the explorer.
#error "explore/explorer.hpp defines COCHAN_DETAIL_INTERLEAVE: include it before any cochan header"
#endif

#include "explore/schedule.hpp" // no cochan header

#include <array>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cochan_explore {

/// The library's interleaving points, named as in `COCHAN_DETAIL_INTERLEAVE(point)`.
enum class hook_point : unsigned char {
    release_grant,     // competing_queue::release_permit: a permit is free, no sender admitted yet
    trampoline_queued, // trampoline::resume: a woken waiter was queued instead of resumed
    recv_before_link,  // recv_op_state::start: stop callback registered, not linked
    send_before_link,  // send_op_state::start: likewise
    select_linked,     // select_awaitable::await_suspend: every branch linked, owner not suspended
    select_unlink,     // select_awaitable::await_resume: decided, about to unlink a losing branch
    ready_after_hint,  // an awaitable's first step (await_ready): the hint read, lock not taken
};

/// What the interleaving points call: run_state::at_hook of the run in progress (run_state
/// installs it for the length of a run); nothing outside a run. A pointer, so that every header
/// of the explorer compiles on its own (an inline function used but not defined would not).
inline void (*g_at_hook)(hook_point) = nullptr;

/// Runs at every interleaving point.
inline void interleave(hook_point point) noexcept {
    if (g_at_hook != nullptr) g_at_hook(point);
}

} // namespace cochan_explore

// The translation units of cochan_explore include this header (through explorer.hpp) first:
// every cochan header in cochan_explore sees this definition.
#define COCHAN_DETAIL_INTERLEAVE(point)                                                            \
    ::cochan_explore::interleave(::cochan_explore::hook_point::point)

namespace cochan_explore {

inline const char* hook_name(hook_point p) noexcept {
    switch (p) {
    case hook_point::release_grant: return "release_grant";
    case hook_point::trampoline_queued: return "trampoline_queued";
    case hook_point::recv_before_link: return "recv_before_link";
    case hook_point::send_before_link: return "send_before_link";
    case hook_point::select_linked: return "select_linked";
    case hook_point::select_unlink: return "select_unlink";
    case hook_point::ready_after_hint: return "ready_after_hint";
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
inline constexpr where_mask select_linked = hook(hook_point::select_linked);
inline constexpr where_mask select_unlink = hook(hook_point::select_unlink);
inline constexpr where_mask select_points = select_linked | select_unlink;
inline constexpr where_mask ready_after_hint = hook(hook_point::ready_after_hint);
inline constexpr where_mask hooks =
    release_grant | trampoline_queued | before_link | select_points | ready_after_hint;
} // namespace at

/// Something the explorer may make happen once, while `enabled()`: a stop request, a harness
/// `try_send`, dropping an endpoint, destroying a coroutine...
struct event {
    std::string label;
    std::function<bool()> enabled;
    std::function<void()> fire;
    where_mask where;
    bool fired;
};

/// A run's events, and which of them are choices between two steps or at a hook point.
class event_table {
  public:
    static constexpr std::size_t max_events = 16;

    /// An event that may fire between two steps (at::step) and/or at the hook points in `where`.
    void add(std::string label, std::function<bool()> enabled, std::function<void()> fire,
             where_mask where) {
        if (events_.size() == max_events) throw std::length_error("too many events");
        events_.push_back({std::move(label), std::move(enabled), std::move(fire), where, false});
    }

    /// The events that may fire now, between two steps, in the order they were added.
    const std::vector<event*>& enabled_at_step() {
        enabled_.clear();
        for (auto& e : events_) {
            if (!e.fired && (e.where & at::step) != 0 && e.enabled()) enabled_.push_back(&e);
        }
        return enabled_;
    }

    /// The choice at a hook point: continue (option 0), or fire one of the events allowed
    /// there first (through `fire`, which marks it fired), then choose again. Allocates
    /// nothing: under ASan every allocation records a stack trace.
    template <class Fire>
    void choose_at(hook_point p, schedule& schedule, bool verbose, const Fire& fire) {
        const where_mask here = at::hook(p);
        for (;;) {
            std::array<event*, max_events> enabled{};
            std::size_t n = 0;
            for (auto& e : events_) {
                if (!e.fired && (e.where & here) != 0 && e.enabled()) enabled[n++] = &e;
            }
            if (n == 0) return;
            const std::size_t c = schedule.pick(n + 1);
            if (verbose) {
                std::printf("      @%s [%zu/%zu] %s\n", hook_name(p), c, n + 1,
                            c == 0 ? "continue" : enabled[c - 1]->label.c_str());
            }
            if (c == 0) return;
            fire(*enabled[c - 1]);
        }
    }

  private:
    std::vector<event> events_;
    std::vector<event*> enabled_;
};

} // namespace cochan_explore
