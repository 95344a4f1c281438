// counting_allocator: an allocator that counts what it allocates and frees, to associate with a
// completion handler (asio::bind_allocator) and see where an operation's memory comes from.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

namespace cochan_test {

/// The counts shared by every counting_allocator of one `Tag` (any rebinding). Thread-safe.
template <class Tag> struct allocation_counts {
    inline static std::atomic<int> allocations{0};
    inline static std::atomic<int> deallocations{0};
    static void reset() noexcept {
        allocations = 0;
        deallocations = 0;
    }
};

/// `std::allocator<T>`, counted in `allocation_counts<Tag>`. Stateless: all compare equal.
template <class T, class Tag = void> struct counting_allocator {
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
