// An allocator that counts what it allocates, for the tests of "memory comes from the
// handler's associated allocator".
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

namespace cochan_test {

/// The counts of every `counting_allocator<*, Tag>` (one set per tag, shared by rebinding).
/// Atomic: an Asio handler's allocator may be used on any thread of its executor.
template <class Tag> struct allocation_counts {
    static inline std::atomic<int> allocations{0};
    static inline std::atomic<int> deallocations{0};
    static void reset() noexcept {
        allocations = 0;
        deallocations = 0;
    }
};

/// `std::allocator<T>`, counting into `allocation_counts<Tag>`. Give each test its own tag.
template <class T, class Tag> struct counting_allocator {
    using value_type = T;
    using counts = allocation_counts<Tag>;

    counting_allocator() = default;
    template <class U> counting_allocator(const counting_allocator<U, Tag>&) noexcept {}

    T* allocate(std::size_t n) {
        ++counts::allocations;
        return std::allocator<T>().allocate(n);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        ++counts::deallocations;
        std::allocator<T>().deallocate(p, n);
    }
    friend bool operator==(const counting_allocator&, const counting_allocator&) = default;
};

} // namespace cochan_test
