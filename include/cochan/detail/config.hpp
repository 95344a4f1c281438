// cochan: configuration and the precondition check shared by every header.
#pragma once

#include <atomic> // _GLIBCXX_HAVE_PLATFORM_WAIT, where it is defined
#include <cstdio>
#include <cstdlib>

namespace cochan::detail {

/// Prints the failed precondition and aborts. Used by `COCHAN_ASSERT` (debug builds) and
/// `COCHAN_CHECK` (every build).
[[noreturn]] inline void assert_fail(const char* expr, const char* message, const char* file,
                                     int line) noexcept {
    std::fprintf(stderr, "cochan assertion failed: %s (%s) at %s:%d\n", expr, message, file, line);
    std::fflush(stderr);
    std::abort();
}

} // namespace cochan::detail

/// Checks a precondition of the public API (a moved-from endpoint, two overlapping sends on one
/// SPMC sender). Active unless `NDEBUG` is defined; define `COCHAN_ASSERT` yourself to override.
#ifndef COCHAN_ASSERT
#ifdef NDEBUG
#define COCHAN_ASSERT(cond, message) ((void)0)
#else
#define COCHAN_ASSERT(cond, message)                                                               \
    ((cond) ? (void)0 : ::cochan::detail::assert_fail(#cond, message, __FILE__, __LINE__))
#endif
#endif

/// `b` (a bool), telling the compiler it is almost always true where the compiler takes such a
/// hint (g++ and clang); `b` itself elsewhere (MSVC).
#if defined(__GNUC__)
#define COCHAN_DETAIL_EXPECT_TRUE(b) __builtin_expect((b), 1)
#else
#define COCHAN_DETAIL_EXPECT_TRUE(b) (b)
#endif

/// Checks a precondition whose violation would otherwise lose a value or crash later, far from
/// the cause (a moved-from endpoint, a second send overlapping a waiting one on an SPMC sender).
/// Active in every build: each is one compare on a path that already does far more.
#define COCHAN_CHECK(cond, message)                                                                \
    (COCHAN_DETAIL_EXPECT_TRUE(static_cast<bool>(cond))                                            \
         ? (void)0                                                                                 \
         : ::cochan::detail::assert_fail(#cond, message, __FILE__, __LINE__))

/// A point where the queue does a step without its lock that another thread could interleave
/// with (for example between freeing a slot and looking for a sender to admit). Nothing by
/// default; the schedule explorer (tests/explore) defines it to run other operations there.
#ifndef COCHAN_DETAIL_INTERLEAVE
#define COCHAN_DETAIL_INTERLEAVE(point) ((void)0)
#endif

/// The gap in `channel_lock::unlock()` between reading the lock's state and releasing it, where
/// a waiter's mark goes unseen (detail/lock.hpp). Nothing by default; the lock's own test
/// (tests/lock) defines it to make a waiter fall asleep there.
#ifndef COCHAN_DETAIL_LOCK_GAP
#define COCHAN_DETAIL_LOCK_GAP() ((void)0)
#endif

/// A blocking call (`blocking_recv`, `blocking_send`, their deadline forms) whose operation is
/// linked as a waiter, just before its thread waits for the signal. Nothing by default; the
/// blocking calls' own test (tests/blocking) defines it to request a stop only once the call
/// really waits, instead of sleeping and hoping.
#ifndef COCHAN_DETAIL_BLOCKING_LINKED
#define COCHAN_DETAIL_BLOCKING_LINKED() ((void)0)
#endif

/// 1 where the standard library's `std::atomic::wait` (and what it builds on it:
/// `std::binary_semaphore`, `std::latch`, the waits of `std::stop_callback`) can be relied on;
/// 0 on libstdc++ without a futex to wait on (`_GLIBCXX_HAVE_PLATFORM_WAIT` undefined:
/// MinGW-w64, the BSDs), whose fallback misses notifications in g++ 12 and sleeps for good.
/// Where it is 0, the channel lock sleeps on its own table (detail/lock.hpp) and the default
/// stop token is cochan's (cochan/stop_token.hpp). Needs <atomic> (included here).
#if defined(__GLIBCXX__) && !defined(_GLIBCXX_HAVE_PLATFORM_WAIT)
#define COCHAN_DETAIL_STD_ATOMIC_WAIT_SOUND 0
#else
#define COCHAN_DETAIL_STD_ATOMIC_WAIT_SOUND 1
#endif

/// On the few small functions of every operation's path (the lock, the "anything to do?"
/// checks in front of the rare slow paths), where g++ at -O2/-O3 otherwise keeps an out-of-line
/// call. A hint only: nothing depends on it.
#if defined(__GNUC__)
#define COCHAN_DETAIL_INLINE [[gnu::always_inline]] inline
#elif defined(_MSC_VER)
#define COCHAN_DETAIL_INLINE __forceinline
#else
#define COCHAN_DETAIL_INLINE inline
#endif

/// On the rare paths kept out of line so that the hot path around them stays small.
#if defined(__GNUC__)
#define COCHAN_DETAIL_NOINLINE [[gnu::noinline]]
#elif defined(_MSC_VER)
#define COCHAN_DETAIL_NOINLINE __declspec(noinline)
#else
#define COCHAN_DETAIL_NOINLINE
#endif
