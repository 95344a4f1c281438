// cochan: the short lock that guards a channel's state.
#pragma once

#include <cochan/detail/config.hpp>

#include <atomic>
#include <cstdint>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace cochan::detail {

/// One step of a spin-wait: tells the CPU this is a spin loop (x86 `pause`; nothing elsewhere).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

/// Step `spins` (0, 1, ...) of a wait for another thread: `cpu_relax()` for the first `pauses`
/// steps, then `std::this_thread::yield()`, since the thread waited for may need this core.
inline void spin_backoff(int spins, int pauses) noexcept {
    if (spins < pauses) {
        cpu_relax();
    } else {
        std::this_thread::yield();
    }
}

/// A mutex for critical sections of a few dozen instructions: one compare-and-swap to take it
/// uncontended, a bounded spin when it is held, then sleep through `std::atomic::wait` (a futex
/// on Linux), so a preempted holder never burns a core for long.
///
/// State machine of `state_` (the only field):
///   0 unlocked
///   1 locked, nobody sleeping
///   2 locked, a thread may be sleeping on it (unlock must notify)
/// lock(): 0 -> 1 by CAS (acquire); after spinning, `exchange(2)` (acquire) until it returns 0,
///         waiting on the value 2 in between.
/// unlock(): exchange(0) (release; synchronises with the acquire of the next lock()); notifies
///           one sleeper if the old value was 2.
/// The notification after releasing touches no memory in user space (it is a futex wake on the
/// address), so a channel freed by the next owner as soon as it is released is not accessed.
/// Thread-safe.
class channel_lock {
  public:
    COCHAN_DETAIL_INLINE void lock() noexcept {
        std::uint32_t expected = 0;
        if (state_.compare_exchange_weak(expected, 1, std::memory_order_acquire,
                                         std::memory_order_relaxed)) {
            return;
        }
        lock_slow();
    }

    COCHAN_DETAIL_INLINE void unlock() noexcept {
        if (state_.exchange(0, std::memory_order_release) == 2) state_.notify_one();
    }

  private:
    void lock_slow() noexcept {
        for (int spin = 0; spin < 64; ++spin) {
            cpu_relax();
            std::uint32_t expected = 0;
            if (state_.load(std::memory_order_relaxed) == 0 &&
                state_.compare_exchange_weak(expected, 1, std::memory_order_acquire,
                                             std::memory_order_relaxed)) {
                return;
            }
        }
        // Marking 2 before sleeping makes the holder's unlock() wake us.
        while (state_.exchange(2, std::memory_order_acquire) != 0) {
            state_.wait(2, std::memory_order_relaxed);
        }
    }

    std::atomic<std::uint32_t> state_{0};
};

/// A held `channel_lock`, released by unlock() or at the end of the scope, whichever comes
/// first: `std::unique_lock` without what the channel never uses (deferred or adopted locking,
/// an unlock that throws when nothing is held), small enough that taking and releasing the lock
/// inline into every operation. Not thread-safe: one owner, one scope.
class lock_section {
  public:
    COCHAN_DETAIL_INLINE explicit lock_section(channel_lock& m) noexcept : m_(&m) { m.lock(); }
    lock_section(const lock_section&) = delete;
    lock_section& operator=(const lock_section&) = delete;
    COCHAN_DETAIL_INLINE ~lock_section() {
        if (m_ != nullptr) m_->unlock();
    }

    /// Releases the lock early (at most once).
    COCHAN_DETAIL_INLINE void unlock() noexcept {
        m_->unlock();
        m_ = nullptr;
    }

  private:
    channel_lock* m_; // held while not null
};

} // namespace cochan::detail
