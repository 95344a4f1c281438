// The allocation failure hook of support/alloc_hook.hpp: the global operator new and delete,
// every form, and (where the C library has it) aligned_alloc, replaced; the (k + 1)-th
// allocation on a thread armed with k fails (operator new throws std::bad_alloc, aligned_alloc
// returns null).
#include "support/alloc_hook.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <new>

// posix_memalign (POSIX) and _aligned_malloc (Windows) are declared in <stdlib.h>, not <cstdlib>.
#include <stdlib.h> // NOLINT(modernize-deprecated-headers)

#ifndef COCHAN_TEST_NO_ALLOC_HOOK
namespace cochan_test {
thread_local long fail_alloc_after = -1;
} // namespace cochan_test

namespace {

using cochan_test::fail_alloc_after;

// Aligned memory from the C library, and its release: posix_memalign and free; on Windows,
// whose C library has neither posix_memalign nor aligned_alloc, _aligned_malloc and
// _aligned_free (which alone may free it).
void* raw_aligned_alloc(std::size_t align, std::size_t n) noexcept {
    // posix_memalign wants an alignment of at least a pointer.
    align = std::max(align, sizeof(void*));
#if defined(_WIN32)
    return _aligned_malloc(n, align);
#else
    void* p = nullptr;
    return posix_memalign(&p, align, n) == 0 ? p : nullptr;
#endif
}
void raw_aligned_free(void* p) noexcept {
#if defined(_WIN32)
    _aligned_free(p);
#else
    std::free(p);
#endif
}

// Every allocation of the program comes here: malloc, or raw_aligned_alloc for the aligned
// forms.
void* allocate(std::size_t n, std::size_t align = 0) {
    if (fail_alloc_after >= 0 && fail_alloc_after-- == 0) throw std::bad_alloc();
    if (n == 0) n = 1;
    for (;;) {
        void* p = align == 0 ? std::malloc(n) : raw_aligned_alloc(align, n);
        if (p != nullptr) return p;
        std::new_handler handler = std::get_new_handler();
        if (handler == nullptr) throw std::bad_alloc();
        handler();
    }
}

void* allocate_nothrow(std::size_t n, std::size_t align = 0) noexcept {
    try {
        return allocate(n, align);
    } catch (...) {
        return nullptr;
    }
}

std::size_t to_size(std::align_val_t a) noexcept {
    return static_cast<std::size_t>(a);
}

} // namespace

#if !defined(_WIN32)
// aligned_alloc is replaced too (the program's definition wins over the C library's, and over a
// sanitizer's interceptor, which is weak): Asio allocates a cancellation slot's handler with it,
// not with operator new. Windows has no aligned_alloc (Asio uses _aligned_malloc there).
extern "C" void* aligned_alloc(std::size_t align, std::size_t n) {
    if (fail_alloc_after >= 0 && fail_alloc_after-- == 0) return nullptr;
    return raw_aligned_alloc(align, n);
}
#endif

// Every form is replaced, aligned ones included, so that (1) every allocation pairs with its
// deallocation (malloc with free, raw_aligned_alloc with raw_aligned_free: ASan checks the
// pairing), and (2) the static
// new/delete of clang's TSan and MSan runtimes is never linked in (it would define them twice).
void* operator new(std::size_t n) {
    return allocate(n);
}
void* operator new[](std::size_t n) {
    return allocate(n);
}
void* operator new(std::size_t n, std::align_val_t a) {
    return allocate(n, to_size(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
    return allocate(n, to_size(a));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    return allocate_nothrow(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    return allocate_nothrow(n);
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return allocate_nothrow(n, to_size(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return allocate_nothrow(n, to_size(a));
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
    raw_aligned_free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
    raw_aligned_free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    raw_aligned_free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
    raw_aligned_free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
    raw_aligned_free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
    raw_aligned_free(p);
}
#endif // COCHAN_TEST_NO_ALLOC_HOOK
