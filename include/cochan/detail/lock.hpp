// cochan: the short lock that guards a channel's state.
#pragma once

#include <cochan/detail/config.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <version>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>
#endif

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
#include <immintrin.h>
#elif defined(_M_ARM64)
#include <intrin.h>
#endif

namespace cochan::detail {

/// One step of a spin-wait: tells the CPU this is a spin loop (x86 `pause`, Arm `yield`;
/// nothing elsewhere).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
    _mm_pause();
#elif defined(__aarch64__) && defined(__GNUC__)
    __asm__ __volatile__("yield");
#elif defined(_M_ARM64)
    __yield();
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

// How a waiting thread sleeps on the lock's word and how a release wakes it. Each provides
//   static constexpr bool bounded;   // a sleep ends by itself within a time limit
//                                    // (futex_sleep::limit_ns), so the release may miss a
//                                    // mark (below)
//   static void wait(std::atomic<std::uint32_t>& word, std::uint32_t marked) noexcept;
//       // sleeps while `word` holds `marked` (may return early: the caller looks again)
//   static void wake_one(std::atomic<std::uint32_t>& word) noexcept;
//       // after `word` was changed: wakes one thread asleep on it (or more)
// and none reads or writes the word's memory in wake_one, only its address, so a channel
// freed as soon as its lock is released is not accessed.

#if defined(__linux__)
/// The Linux futex, with a time limit on each sleep: the default on Linux.
struct futex_sleep {
    static constexpr bool bounded = true;
    static constexpr long limit_ns = 100'000;
    static void wait(std::atomic<std::uint32_t>& word, std::uint32_t marked) noexcept {
        timespec limit{0, limit_ns};
        ::syscall(SYS_futex, address(word), FUTEX_WAIT_PRIVATE, marked, &limit, nullptr, 0);
    }
    static void wake_one(std::atomic<std::uint32_t>& word) noexcept {
        ::syscall(SYS_futex, address(word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    }
    /// The futex word: `std::atomic<std::uint32_t>` is a 4-byte object holding its value
    /// (checked below), which is what the kernel compares and waits on.
    static std::uint32_t* address(std::atomic<std::uint32_t>& word) noexcept {
        static_assert(sizeof(word) == sizeof(std::uint32_t) &&
                      std::atomic<std::uint32_t>::is_always_lock_free);
        return reinterpret_cast<std::uint32_t*>(&word);
    }
};
#endif

/// 1 where `atomic_sleep` exists: the standard library has `std::atomic::wait` and it is sound
/// (COCHAN_DETAIL_STD_ATOMIC_WAIT_SOUND); else 0.
#if defined(__cpp_lib_atomic_wait) && COCHAN_DETAIL_STD_ATOMIC_WAIT_SOUND
#define COCHAN_DETAIL_HAS_ATOMIC_SLEEP 1
#else
#define COCHAN_DETAIL_HAS_ATOMIC_SLEEP 0
#endif

#if COCHAN_DETAIL_HAS_ATOMIC_SLEEP
/// C++20's `std::atomic::wait` / `notify_one`: WaitOnAddress on Windows (MSVC's library),
/// `__ulock_wait` on macOS (libc++), a futex on Linux. No time limit. The default off Linux
/// where the standard library's implementation is sound (see table_sleep).
struct atomic_sleep {
    static constexpr bool bounded = false;
    static void wait(std::atomic<std::uint32_t>& word, std::uint32_t marked) noexcept {
        word.wait(marked, std::memory_order_relaxed);
    }
    static void wake_one(std::atomic<std::uint32_t>& word) noexcept { word.notify_one(); }
};
#endif

/// A fixed table of mutex and condition-variable pairs, chosen by the word's address. No time
/// limit. The default where the standard library's `std::atomic::wait` is missing or unsound:
/// libstdc++ without a futex (MinGW-w64, the BSDs), whose waits through g++ 12 can miss a
/// notification and sleep for good.
///
/// A sleeper looks at the word under its pair's mutex and waits on the condition variable in
/// the same step; a waker changes the word first, then takes and releases the same mutex
/// before notifying. So either the sleeper's look comes after the change (the mutex orders
/// them) and it does not sleep, or it is already waiting when the notification comes. Several
/// words share a pair, so the waker wakes every sleeper of the pair and each looks again.
struct table_sleep {
    static constexpr bool bounded = false;
    static void wait(std::atomic<std::uint32_t>& word, std::uint32_t marked) noexcept {
        pair& p = pair_of(&word);
        std::unique_lock<std::mutex> guard(p.mutex);
        // Relaxed: the mutex orders this look after a waker's change (see above).
        while (word.load(std::memory_order_relaxed) == marked) p.woken.wait(guard);
    }
    static void wake_one(std::atomic<std::uint32_t>& word) noexcept {
        pair& p = pair_of(&word);
        { const std::lock_guard<std::mutex> guard(p.mutex); }
        p.woken.notify_all();
    }

  private:
    struct pair {
        std::mutex mutex;
        std::condition_variable woken;
    };
    static constexpr std::size_t pairs = 64;
    /// Never destroyed: a lock may be released while static objects are being destroyed.
    union table {
        pair at[pairs];
        table() : at{} {}
        // Not `= default`: that would be deleted, since the members have destructors.
        ~table() {} // NOLINT(modernize-use-equals-default)
    };
    static pair& pair_of(const void* word) noexcept {
        static table t;
        const auto bits = reinterpret_cast<std::uintptr_t>(word);
        return t.at[((bits >> 2U) ^ (bits >> 9U)) % pairs];
    }
};

#if defined(__linux__)
using default_sleep = futex_sleep;
#elif COCHAN_DETAIL_HAS_ATOMIC_SLEEP
using default_sleep = atomic_sleep;
#else
using default_sleep = table_sleep;
#endif

/// A mutex for critical sections of a few dozen instructions: one compare-and-swap to take it
/// uncontended and one plain store (or, where sleeps are not bounded, one exchange) to release
/// it, a bounded spin when it is held, then sleep (`Sleep`: a futex on Linux, see
/// default_sleep), so a preempted holder never burns a core for long.
///
/// State machine of `state_` (the only field):
///   0 unlocked
///   1 locked, nobody sleeping
///   2 locked, a thread may be sleeping on it (unlock must wake one)
/// lock():   0 -> 1 by CAS (acquire); after spinning, `exchange(2)` (acquire) until it returns 0,
///           sleeping on the value 2 in between.
///           The spin backs off: 12 looks at the lock, 1, 2, 4, 8, 16, then 32 `pause`s apart
///           (255 in all). A waiter that looks less often leaves the holder's cache line alone,
///           so a holder that takes the lock again and again (a producer that never waits, on
///           an unbounded channel) keeps it instead of losing it to every look
///           (docs/decisions.md, D-026).
/// unlock(), where sleeps are bounded (Linux): reads `state_` (relaxed; only the holder and the
///           sleepers' `exchange(2)` write it while it is held). 1: stores 0 (release;
///           synchronises with the acquire of the next lock()). 2: `exchange(0)` (release), then
///           wakes one sleeper.
/// unlock(), elsewhere: `exchange(0)` (release); if it returns 2, wakes one sleeper.
///
/// Why a store where it can be: a locked read-modify-write (x86 `xchg`) costs about as much as
/// the CAS that took the lock, and every value crosses two sections. The price is one rare lost
/// wake-up: a thread that marks 2 between the holder's read and its store, and is asleep
/// before the store lands (the holder was interrupted between the two instructions), is not
/// woken by this unlock. Its sleep ends by itself within the limit (`futex_sleep::limit_ns`); it
/// then takes the lock as usual. Where a sleep has no time limit (std::atomic::wait, a condition
/// variable without a deadline), unlock() always exchanges, so no mark goes unseen. Mutual
/// exclusion never depends on the wake-up: only the CAS and the `exchange(2)` that read 0 take the
/// lock. tests/model/channel_lock.pml checks both releases with Spin. Thread-safe.
template <class Sleep> class basic_channel_lock {
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
        if constexpr (Sleep::bounded) {
            // Relaxed: the holder's own store of 1 or 2, or a sleeper's exchange(2); a 2 missed
            // here is the bounded lost wake-up described above.
            if (state_.load(std::memory_order_relaxed) == 1) [[likely]] {
                COCHAN_DETAIL_LOCK_GAP(); // tests/lock: a waiter marks 2 here, unseen
                state_.store(0, std::memory_order_release);
                return;
            }
            unlock_slow();
        } else {
            if (state_.exchange(0, std::memory_order_release) == 2) [[unlikely]] {
                Sleep::wake_one(state_);
            }
        }
    }

  private:
    COCHAN_DETAIL_NOINLINE void lock_slow() noexcept {
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
        while (state_.exchange(2, std::memory_order_acquire) != 0) Sleep::wait(state_, 2);
    }

    void unlock_slow() noexcept {
        state_.exchange(0, std::memory_order_release);
        Sleep::wake_one(state_);
    }

    std::atomic<std::uint32_t> state_{0};
};

/// The channels' lock: `basic_channel_lock` with the platform's default sleep.
using channel_lock = basic_channel_lock<default_sleep>;

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
