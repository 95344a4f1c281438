// cochan: configuration and the precondition check shared by every header.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace cochan::detail {

/// Prints the failed precondition and aborts. Used by `COCHAN_ASSERT` in debug builds.
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
