// Coroutine types and a latch for cochan's tests and benchmarks (standard library only: the
// benchmarks include it without Catch2).
//
// task<R>    eager, owning coroutine: runs until its first real suspension when
//            called, keeps its frame after finishing so the test can inspect
//            the result, and can be destroyed mid-suspension with reset().
// detached   fire-and-forget coroutine for thread tests; starts at once, frees itself.
// lazy_detached
//            the same, created suspended: whoever holds its handle() starts it (the
//            benchmarks create their tasks untimed and start them timed).
// completion_latch
//            countdown a test thread blocks on until N coroutines finished.
#pragma once

#include <cassert>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>

namespace cochan_test {

template <class R = void> class task;

namespace detail {

// Shared by task<R> and task<void>: suspension policy and exception capture.
class task_promise_base {
  public:
    // Eager: the body runs inside the call, so a test sees the coroutine
    // already parked on the channel when the call returns.
    std::suspend_never initial_suspend() const noexcept { return {}; }
    // Lazy finish: the frame (and the result stored in it) lives until the
    // owning task is destroyed or reset.
    std::suspend_always final_suspend() const noexcept { return {}; }

    void unhandled_exception() noexcept { exception_ = std::current_exception(); }

    bool has_exception() const noexcept { return exception_ != nullptr; }

    void rethrow_if_exception() const {
        if (exception_) std::rethrow_exception(exception_);
    }

  private:
    std::exception_ptr exception_;
};

template <class R> class task_promise : public task_promise_base {
  public:
    task<R> get_return_object() noexcept;

    // By value: accepts braced lists and anything convertible to R.
    void return_value(R value) { value_.emplace(std::move(value)); }

    R& value() noexcept {
        assert(value_.has_value());
        return *value_;
    }

  private:
    std::optional<R> value_;
};

template <> class task_promise<void> : public task_promise_base {
  public:
    task<void> get_return_object() noexcept;
    void return_void() const noexcept {}
};

} // namespace detail

// Eager coroutine owning its frame. Move-only.
// Not thread-safe: one thread at a time may use a task object (the coroutine
// itself may of course be resumed on another thread).
template <class R> class task {
    static_assert(!std::is_reference_v<R>, "task<R&> is not supported");

  public:
    using promise_type = detail::task_promise<R>;
    using handle_type = std::coroutine_handle<promise_type>;

    task() noexcept = default;
    explicit task(handle_type h) noexcept : handle_(h) {}

    task(task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
    task& operator=(task&& other) noexcept {
        if (this != &other) {
            reset();
            handle_ = std::exchange(other.handle_, {});
        }
        return *this;
    }
    task(const task&) = delete;
    task& operator=(const task&) = delete;

    ~task() { reset(); }

    // True if this object owns a frame (false after move-from or reset()).
    explicit operator bool() const noexcept { return static_cast<bool>(handle_); }

    // True once the body has finished (returned or threw). False if there is
    // no frame.
    bool done() const noexcept { return handle_ && handle_.done(); }

    bool has_exception() const noexcept { return done() && handle_.promise().has_exception(); }

    // Requires done(). Rethrows the exception the body exited with.
    decltype(auto) result() const {
        assert(done());
        handle_.promise().rethrow_if_exception();
        if constexpr (std::is_void_v<R>) {
            return;
        } else {
            return static_cast<R&>(handle_.promise().value());
        }
    }

    // Destroys the frame now, even if it is suspended mid-body. Destroying a
    // suspended frame runs the destructors of its live locals, including any
    // awaiter it is parked in: this is how tests simulate cancellation.
    void reset() noexcept {
        if (handle_) std::exchange(handle_, {}).destroy();
    }

    std::coroutine_handle<> handle() const noexcept { return handle_; }

  private:
    handle_type handle_;
};

namespace detail {

template <class R> task<R> task_promise<R>::get_return_object() noexcept {
    return task<R>(std::coroutine_handle<task_promise<R>>::from_promise(*this));
}

inline task<void> task_promise<void>::get_return_object() noexcept {
    return task<void>(std::coroutine_handle<task_promise<void>>::from_promise(*this));
}

// The fire-and-forget coroutines, by how they start.
enum class start { eager, lazy };

} // namespace detail

// Fire-and-forget coroutine: frees its own frame when the body finishes. An escaping exception
// terminates, since nobody could observe it. Never destroy a started one from outside.
// - detached (eager) starts inside the call and runs to its first suspension.
// - lazy_detached is created suspended: handle() must then be resumed exactly once (directly or
//   by posting it to an executor), or destroyed without ever being resumed.
// Thread-safe (the object is only a handle; the coroutine itself may move between threads).
template <detail::start Start> class basic_detached {
  public:
    struct promise_type {
        basic_detached get_return_object() noexcept {
            return basic_detached(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        auto initial_suspend() const noexcept {
            if constexpr (Start == detail::start::eager) {
                return std::suspend_never{};
            } else {
                return std::suspend_always{};
            }
        }
        std::suspend_never final_suspend() const noexcept { return {}; }
        void return_void() const noexcept {}
        [[noreturn]] void unhandled_exception() const noexcept { std::terminate(); }
    };

    // The not yet started coroutine (lazy_detached only: an eager one may be gone already).
    std::coroutine_handle<> handle() const noexcept requires(Start == detail::start::lazy) {
        return handle_;
    }

  private:
    explicit basic_detached(std::coroutine_handle<> h) noexcept : handle_(h) {}

    std::coroutine_handle<> handle_;
};

using detached = basic_detached<detail::start::eager>;
using lazy_detached = basic_detached<detail::start::lazy>;

// Countdown latch that also supports a timed wait (std::latch does not), so a
// broken test fails instead of hanging, and can grow (count_up) while it waits.
// Thread-safe.
class completion_latch {
  public:
    explicit completion_latch(std::size_t count) : count_(count) {}

    completion_latch(const completion_latch&) = delete;
    completion_latch& operator=(const completion_latch&) = delete;

    void count_down() {
        std::lock_guard lock(mutex_);
        assert(count_ > 0);
        // Notify while holding the lock: a waiter may destroy the latch as
        // soon as it observes zero, so we must be done touching it by then.
        if (--count_ == 0) cv_.notify_all();
    }

    // One more to wait for, e.g. a coroutine starting another. Only someone who has not
    // counted down yet may call it, so the count cannot have reached zero.
    void count_up() {
        std::lock_guard lock(mutex_);
        assert(count_ > 0);
        ++count_;
    }

    void wait() {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return count_ == 0; });
    }

    // Returns true if the count reached zero before the timeout.
    bool wait_for(std::chrono::milliseconds timeout) {
        std::unique_lock lock(mutex_);
        return cv_.wait_for(lock, timeout, [this] { return count_ == 0; });
    }

    std::size_t remaining() const {
        std::lock_guard lock(mutex_);
        return count_;
    }

  private:
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::size_t count_;
};

} // namespace cochan_test
