// cochan: the element count of a channel's buffer, readable outside the lock as a hint.
#pragma once

#include <atomic>
#include <cstddef>

namespace cochan::detail {

/// A buffer's element count (`ring`, `segmented_queue`). Written only by the buffer's owner
/// under the channel's lock (or by a buffer moved out of the channel, which nobody else sees);
/// read there exactly, or outside the lock by anyone as a hint that may be stale
/// (competing_queue::value_hint and cell_hint, for an awaitable's first step). Relaxed atomic
/// loads and stores, never a read-modify-write: on x86 and ARM they are the plain moves an
/// ordinary `std::size_t` would compile to, and a reader outside the lock is not a data race.
/// Nothing may be concluded from a hint; the lock decides.
class size_counter {
  public:
    size_counter() noexcept = default;
    /// Takes `other`'s count and leaves it 0 (a buffer moved out under the lock).
    size_counter(size_counter&& other) noexcept : n_(other.get()) { other.set(0); }
    size_counter& operator=(size_counter&&) = delete;
    ~size_counter() = default;

    std::size_t get() const noexcept { return n_.load(std::memory_order_relaxed); }
    void increment() noexcept { set(get() + 1); }
    void decrement() noexcept { set(get() - 1); }

  private:
    void set(std::size_t n) noexcept { n_.store(n, std::memory_order_relaxed); }

    std::atomic<std::size_t> n_{0};
};

} // namespace cochan::detail
