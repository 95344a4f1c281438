// cochan: the scheduler a coroutine is resumed by when a channel wakes it.
//
//     struct my_promise {
//         my_pool* pool;
//         cochan::scheduler_ref cochan_scheduler() const noexcept { return *pool; }
//         ...
//     };
//
// A coroutine whose promise names a scheduler that way is, whenever a channel operation wakes it
// with the default resumption, handed to that scheduler (`schedule(handle)`) instead of being
// resumed on the thread that woke it: a pool's idle worker can then run it while the waking
// thread goes on (docs/contract.md, rule 13). cochan's own `cochan::job` (cochan/runtime.hpp)
// does this for `cochan::thread_pool`.
#pragma once

#include <concepts>
#include <coroutine>
#include <memory>
#include <type_traits>

namespace cochan {

/// A non-owning reference to something that resumes coroutines later, on its own threads: any
/// object with `schedule(std::coroutine_handle<>)` (a thread pool, an event loop). An empty one
/// refers to nothing. Copying copies the reference; the scheduler must outlive every coroutine
/// that names it. Thread safety: as the scheduler's own `schedule`.
class scheduler_ref {
  public:
    scheduler_ref() noexcept = default;

    template <class S>
    requires(!std::same_as<std::remove_cvref_t<S>, scheduler_ref>) &&
        requires(S& s, std::coroutine_handle<> h) {
        s.schedule(h);
    }
    // NOLINTNEXTLINE(google-explicit-constructor): a scheduler converts, as a reference would
    scheduler_ref(S& s) noexcept : self_(std::addressof(s)), schedule_(&call<S>) {}

    /// Hands `h` to the scheduler, which resumes it later. Requires a non-empty reference. May
    /// throw what the scheduler's `schedule` throws (then `h` was not taken).
    void schedule(std::coroutine_handle<> h) const { schedule_(self_, h); }

    explicit operator bool() const noexcept { return schedule_ != nullptr; }
    friend bool operator==(const scheduler_ref&, const scheduler_ref&) noexcept = default;

  private:
    template <class S> static void call(void* s, std::coroutine_handle<> h) {
        static_cast<S*>(s)->schedule(h);
    }

    void* self_ = nullptr;
    void (*schedule_)(void*, std::coroutine_handle<>) = nullptr;
};

/// A promise type that names the scheduler its coroutine is resumed by when a channel wakes it.
template <class P>
concept scheduling_promise = requires(const P& p) {
    { p.cochan_scheduler() }
    noexcept->std::convertible_to<scheduler_ref>;
};

} // namespace cochan
