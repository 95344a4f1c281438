// cochan: the fixed ring that stores a bounded channel's values.
#pragma once

#include <cochan/detail/config.hpp>
#include <cochan/detail/size_counter.hpp>

#include <cstddef>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>

namespace cochan::detail {

/// A preallocated FIFO of at most `capacity` values; it never allocates after construction.
/// Not thread-safe: the queue's lock guards it.
/// Exception safety: `push_*` give the strong guarantee (if `T`'s move throws, nothing changed).
template <class T> class ring {
  public:
    static constexpr bool bounded = true;

    /// The largest capacity whose size in bytes, and every index computed from it
    /// (`head_ + size_ < 2 * capacity`), fits a `std::size_t` without wrapping.
    static constexpr std::size_t max_capacity() noexcept {
        return static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()) / sizeof(T);
    }

    /// Throws `std::length_error` for a capacity above max_capacity(), before allocating (an
    /// unchecked `capacity * sizeof(T)` could wrap to a small allocation), `std::bad_alloc` if
    /// the memory is not there.
    explicit ring(std::size_t capacity)
        : cells_(static_cast<T*>(
              ::operator new (checked_bytes(capacity), std::align_val_t{alignof(T)}))),
          capacity_(capacity) {}

    /// The moved-from ring keeps its capacity (the channel still answers capacity()) but no
    /// cells; nothing is stored into it again (the queue moves its storage out only when the
    /// last receiver leaves, after which every send fails first).
    ring(ring&& other) noexcept
        : cells_(std::exchange(other.cells_, nullptr)), capacity_(other.capacity_),
          head_(std::exchange(other.head_, 0)), size_(std::move(other.size_)) {}
    ring& operator=(ring&&) = delete;

    ~ring() {
        clear();
        if (cells_ != nullptr) ::operator delete (cells_, std::align_val_t{alignof(T)});
    }

    std::size_t size() const noexcept { return size_.get(); }
    /// Any thread, without the lock: the size, possibly stale (see size_counter).
    std::size_t size_hint() const noexcept { return size_.get(); }
    /// The bound: the number of cells. The channel's capacity is this, held here only.
    std::size_t capacity() const noexcept { return capacity_; }
    bool empty() const noexcept { return size_.get() == 0; }

    void push_back(T&& v) {
        COCHAN_ASSERT(size_.get() < capacity_, "ring overflow");
        std::construct_at(cells_ + wrap(head_ + size_.get()), std::move(v));
        size_.increment();
    }

    /// Puts a value back at the head (a destroyed receiver handing its grant back).
    void push_front(T&& v) {
        COCHAN_ASSERT(size_.get() < capacity_, "ring overflow");
        const std::size_t at = head_ == 0 ? capacity_ - 1 : head_ - 1;
        std::construct_at(cells_ + at, std::move(v));
        head_ = at;
        size_.increment();
    }

    T& front() noexcept { return cells_[head_]; }

    /// Destroys the head, which the caller has moved from.
    void pop_front() noexcept {
        std::destroy_at(cells_ + head_);
        head_ = wrap(head_ + 1);
        size_.decrement();
    }

    void clear() noexcept {
        while (size_.get() != 0) pop_front();
    }

  private:
    static std::size_t checked_bytes(std::size_t capacity) {
        if (capacity > max_capacity()) {
            throw std::length_error("cochan: channel capacity too large for the address space");
        }
        return capacity * sizeof(T);
    }

    std::size_t wrap(std::size_t i) const noexcept { return i >= capacity_ ? i - capacity_ : i; }

    T* cells_;
    std::size_t capacity_;
    std::size_t head_ = 0;
    size_counter size_; // written under the channel's lock; read outside it only as a hint
};

} // namespace cochan::detail
