// cochan: the growable segmented FIFO that stores an unbounded channel's values.
#pragma once

#include <cochan/detail/config.hpp>
#include <cochan/detail/size_counter.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>

namespace cochan::detail {

/// A FIFO of fixed-size segments linked in a list. Memory: it allocates a segment when the
/// tail one is full, frees a segment once drained, and keeps one spare segment for reuse, so
/// a steady flow allocates nothing and a drained queue keeps at most two segments.
/// Not thread-safe: the queue's lock guards it.
/// Exception safety: `push_*` give the strong guarantee (`std::bad_alloc` or a throwing move of
/// `T` leave the queue as it was).
template <class T> class segmented_queue {
  public:
    static constexpr bool bounded = false;
    /// Values per segment: about 2 KiB of payload, between 8 and 256 values.
    static constexpr std::size_t segment_size = std::clamp<std::size_t>(2048 / sizeof(T), 8, 256);

    segmented_queue() = default;
    segmented_queue(segmented_queue&& other) noexcept
        : head_(std::exchange(other.head_, nullptr)), tail_(std::exchange(other.tail_, nullptr)),
          spare_(std::exchange(other.spare_, nullptr)), size_(std::move(other.size_)) {}
    segmented_queue& operator=(segmented_queue&&) = delete;

    ~segmented_queue() {
        while (size_.get() != 0) pop_front();
        delete head_;
        delete spare_;
    }

    std::size_t size() const noexcept { return size_.get(); }
    /// Any thread, without the lock: the size, possibly stale (see size_counter).
    std::size_t size_hint() const noexcept { return size_.get(); }
    bool empty() const noexcept { return size_.get() == 0; }

    void push_back(T&& v) {
        if (tail_ == nullptr || tail_->end == segment_size) {
            segment* s = take_segment(0);
            try {
                std::construct_at(s->at(0), std::move(v));
            } catch (...) {
                give_back(s);
                throw;
            }
            s->end = 1;
            (tail_ != nullptr ? tail_->next : head_) = s;
            tail_ = s;
        } else {
            std::construct_at(tail_->at(tail_->end), std::move(v));
            ++tail_->end;
        }
        size_.increment();
    }

    /// Puts a value back at the head (a destroyed receiver handing its grant back).
    void push_front(T&& v) {
        if (head_ == nullptr || head_->begin == 0) {
            segment* s = take_segment(segment_size);
            try {
                std::construct_at(s->at(segment_size - 1), std::move(v));
            } catch (...) {
                give_back(s);
                throw;
            }
            s->begin = segment_size - 1;
            s->next = head_;
            head_ = s;
            if (tail_ == nullptr) tail_ = s;
        } else {
            std::construct_at(head_->at(head_->begin - 1), std::move(v));
            --head_->begin;
        }
        size_.increment();
    }

    T& front() noexcept { return *head_->at(head_->begin); }

    /// Destroys the head, which the caller has moved from. Always inline; the step taken once per
    /// segment, when the head segment drains, is head_drained().
    COCHAN_DETAIL_INLINE void pop_front() noexcept {
        std::destroy_at(head_->at(head_->begin));
        ++head_->begin;
        size_.decrement();
        if (head_->begin == head_->end) head_drained();
    }

  private:
    struct segment {
        segment* next = nullptr;
        std::size_t begin = 0; // live values are [begin, end)
        std::size_t end = 0;
        alignas(T) unsigned char storage[segment_size * sizeof(T)];

        T* at(std::size_t i) noexcept { return reinterpret_cast<T*>(storage) + i; }
    };

    /// pop_front() emptied the head segment.
    void head_drained() noexcept {
        if (head_ == tail_) { // the only segment: rewind it in place
            head_->begin = head_->end = 0;
        } else {
            give_back(std::exchange(head_, head_->next));
        }
    }

    segment* take_segment(std::size_t at) {
        segment* s = spare_ != nullptr ? std::exchange(spare_, nullptr) : new segment;
        s->next = nullptr;
        s->begin = s->end = at;
        return s;
    }

    void give_back(segment* s) noexcept {
        if (spare_ == nullptr) {
            spare_ = s;
        } else {
            delete s;
        }
    }

    segment* head_ = nullptr; // guarded by the owner's lock, like everything here
    segment* tail_ = nullptr;
    segment* spare_ = nullptr;
    size_counter size_; // written under the channel's lock; read outside it only as a hint
};

} // namespace cochan::detail
