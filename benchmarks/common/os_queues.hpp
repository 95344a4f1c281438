// The OS-thread queues of the benchmarks (ecosystem/os_threads.cpp, workdist/): moodycamel's
// BlockingConcurrentQueue made bounded or not, with tokens, and the textbook mutex +
// condition-variable queue.
#pragma once

#include "harness.hpp"

#include <concurrentqueue/blockingconcurrentqueue.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace bench {

/// moodycamel's BlockingConcurrentQueue (unbounded by nature) with a producer token per producer
/// and a consumer token per consumer, all made by the constructor (before a timed region).
/// Bounded: moodycamel's LightweightSemaphore of `bounded_capacity` free slots; a producer waits
/// for a slot before each enqueue, a consumer returns one after each dequeue. It has no close:
/// callers send end markers. Thread-safe, one token per thread.
class moodycamel_queue {
    using queue = moodycamel::BlockingConcurrentQueue<std::uint64_t>;

  public:
    moodycamel_queue(bool bounded, unsigned producers, unsigned consumers)
        : bounded_(bounded), q_(std::make_unique<queue>()),
          slots_(std::make_unique<moodycamel::LightweightSemaphore>(
              static_cast<moodycamel::LightweightSemaphore::ssize_t>(bounded_capacity))) {
        for (unsigned p = 0; p < producers; ++p) ptoks_.emplace_back(*q_);
        for (unsigned c = 0; c < consumers; ++c) ctoks_.emplace_back(*q_);
    }

    /// Producer p's enqueue; waits for a slot when bounded.
    void push(unsigned p, std::uint64_t v) {
        if (bounded_) slots_->wait();
        if (!q_->enqueue(ptoks_[p], v)) fatal("moodycamel: enqueue failed");
    }

    /// Consumer c's dequeue; waits for a value.
    std::uint64_t pop(unsigned c) {
        std::uint64_t v = 0;
        q_->wait_dequeue(ctoks_[c], v);
        if (bounded_) slots_->signal();
        return v;
    }

  private:
    bool bounded_;
    std::unique_ptr<queue> q_; // tokens point into it
    std::unique_ptr<moodycamel::LightweightSemaphore> slots_;
    std::vector<moodycamel::ProducerToken> ptoks_;
    std::vector<moodycamel::ConsumerToken> ctoks_;
};

/// The textbook blocking queue. Thread-safe.
class locked_queue {
  public:
    explicit locked_queue(std::size_t capacity) : capacity_(capacity) {}

    void push(std::uint64_t v) {
        std::unique_lock lock(mutex_);
        while (q_.size() >= capacity_) not_full_.wait(lock);
        q_.push_back(v);
        lock.unlock();
        not_empty_.notify_one();
    }

    /// False once closed and drained.
    bool pop(std::uint64_t& v) {
        std::unique_lock lock(mutex_);
        while (q_.empty() && !closed_) not_empty_.wait(lock);
        if (q_.empty()) return false;
        v = q_.front();
        q_.pop_front();
        lock.unlock();
        not_full_.notify_one();
        return true;
    }

    void close() {
        {
            std::lock_guard lock(mutex_);
            closed_ = true;
        }
        not_empty_.notify_all();
    }

  private:
    std::mutex mutex_;
    std::condition_variable not_empty_;
    std::condition_variable not_full_;
    std::deque<std::uint64_t> q_; // guarded by mutex_
    bool closed_ = false;         // guarded by mutex_
    const std::size_t capacity_;  // SIZE_MAX: unbounded
};

} // namespace bench
