// cochan: the short lock that guards a channel's state.
#pragma once

#include <cochan/detail/config.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>
#endif

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
/// uncontended and one plain store to release it, a bounded spin when it is held, then sleep
/// (a futex on Linux), so a preempted holder never burns a core for long.
///
/// State machine of `state_` (the only field):
///   0 unlocked
///   1 locked, nobody sleeping
///   2 locked, a thread may be sleeping on it (unlock must wake one)
/// lock():   0 -> 1 by CAS (acquire); after spinning, `exchange(2)` (acquire) until it returns 0,
///           sleeping on the value 2 in between, for at most `sleep_limit_ns` each time.
///           The spin backs off: 12 looks at the lock, 1, 2, 4, 8, 16, then 32 `pause`s apart
///           (255 in all). A waiter that looks less often leaves the holder's cache line alone,
///           so a holder that takes the lock again and again (a producer that never waits, on
///           an unbounded channel) keeps it instead of losing it to every look; in the
///           ecosystem benchmark's unbounded 8-producer rows on 2 threads this halved the time
///           against 64 looks one `pause` apart (docs/decisions.md, D-026).
/// unlock(): reads `state_` (relaxed; only the holder and the sleepers' `exchange(2)` write it
///           while it is held). 1: stores 0 (release; synchronises with the acquire of the next
///           lock()). 2: `exchange(0)` (release), then wakes one sleeper.
///
/// Why a store, and why sleeps are bounded: a locked read-modify-write (x86 `xchg`) costs about
/// as much as the CAS that took the lock (11.5 ns for CAS + exchange against 5.9 ns for CAS +
/// store per uncontended section on the development machine), and every value crosses two
/// sections. The price is one rare lost wake-up: a thread that marks 2 between the holder's read
/// and its store, and is asleep before the store lands (the holder was interrupted between the
/// two instructions), is not woken by this unlock. Its sleep ends by itself after `sleep_limit_ns`;
/// it then takes the lock as usual. Mutual exclusion never depends on the wake-up: only the CAS
/// and the `exchange(2)` that read 0 take the lock.
///
/// The wake-up after releasing touches no memory in user space (a futex wake on the address),
/// so a channel freed by the next owner as soon as it is released is not accessed.
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
        // Relaxed: the holder's own store of 1 or 2, or a sleeper's exchange(2); a 2 missed
        // here is the bounded lost wake-up described above.
        if (state_.load(std::memory_order_relaxed) == 1) [[likely]] {
            COCHAN_DETAIL_LOCK_GAP(); // tests/lock: a waiter marks 2 here, unseen
            state_.store(0, std::memory_order_release);
            return;
        }
        unlock_slow();
    }

    /// The longest a waiter sleeps before it looks at the lock again (see above).
    static constexpr long sleep_limit_ns = 100'000;

  private:
    void lock_slow() noexcept {
        for (int round = 0; round < 12; ++round) {
            for (int i = 0, n = 1 << (round < 5 ? round : 5); i < n; ++i) cpu_relax();
            std::uint32_t expected = 0;
            if (state_.load(std::memory_order_relaxed) == 0 &&
                state_.compare_exchange_weak(expected, 1, std::memory_order_acquire,
                                             std::memory_order_relaxed)) {
                return;
            }
        }
        // Marking 2 before sleeping makes the holder's unlock() wake us (but see above).
        for (int round = 0; state_.exchange(2, std::memory_order_acquire) != 0; ++round) {
            sleep_while_marked(round);
        }
    }

    void unlock_slow() noexcept {
        state_.exchange(0, std::memory_order_release);
        wake_one();
    }

#if defined(__linux__)
    /// Sleeps while `state_` is 2, for at most sleep_limit_ns (a wake-up, a spurious return or
    /// the timeout all end it; the caller looks again).
    void sleep_while_marked(int /*round*/) noexcept {
        timespec limit{0, sleep_limit_ns};
        ::syscall(SYS_futex, word(), FUTEX_WAIT_PRIVATE, 2U, &limit, nullptr, 0);
    }
    void wake_one() noexcept {
        ::syscall(SYS_futex, word(), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    }
    /// The futex word: `std::atomic<std::uint32_t>` is a 4-byte object holding its value
    /// (checked below), which is what the kernel compares and waits on.
    std::uint32_t* word() noexcept {
        static_assert(sizeof(state_) == sizeof(std::uint32_t) &&
                      std::atomic<std::uint32_t>::is_always_lock_free);
        return reinterpret_cast<std::uint32_t*>(&state_);
    }
#else
    /// Elsewhere no wake-up is sent: a waiter yields a few times, then looks again every
    /// sleep_limit_ns.
    void sleep_while_marked(int round) noexcept {
        if (round < 16) {
            std::this_thread::yield();
        } else {
            std::this_thread::sleep_for(std::chrono::nanoseconds(sleep_limit_ns));
        }
    }
    void wake_one() noexcept {}
#endif

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
