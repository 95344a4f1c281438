// cochan: intrusive waiter nodes and FIFO lists used by the competing-consumer queue.
#pragma once

#include <cochan/detail/config.hpp>

#include <coroutine>
#include <cstddef>
#include <exception>
#include <optional>
#include <utility>

namespace cochan::detail {

class select_claim; // detail/select_claim.hpp

/// Where a waiter is in its life. Guarded by the owning queue's lock.
///   idle    -> waiting   the operation linked itself into a waiter list (await_suspend)
///   waiting -> done      a grant, a disconnection or a stop request completed it; the completer
///                        unlinked it under the lock and calls `notify_` after unlocking
///   idle    -> done      the operation completed without suspending
enum class wait_state : unsigned char { idle, waiting, done };

/// How a finished operation ended. Written under the lock by whoever moves the state to `done`;
/// read by the owner after it resumes (the completer's unlock happens before the notification).
enum class outcome : unsigned char {
    none,         ///< not finished
    ok,           ///< sent, or received without a grant (taken from the buffer by the owner itself)
    granted,      ///< received: a sender or a cancelled receiver handed the value to this waiter
    disconnected, ///< the other side is gone
    cancelled,    ///< the stop token fired before a grant
    failed,       ///< send: moving the value into the channel threw; the exception is stored
};

/// A node of an intrusive FIFO list. It lives inside the awaitable (or the blocking call) that
/// waits, so waiting never allocates.
struct waiter_base {
    /// Called exactly once, after the lock is released, by whoever completed the waiter. It must
    /// not touch the queue: the waiter's owner may destroy its endpoint as soon as it resumes.
    using notify_fn = void (*)(waiter_base*) noexcept;

    waiter_base* next_ = nullptr;         // list link; guarded by the lock while linked, then used
    waiter_base* prev_ = nullptr;         // by the completer's batch and the trampoline queue
    const void* queued_on_ = nullptr;     // the trampoline queue holding it, if any: written and
                                          // read only by the thread owning that queue
    notify_fn notify_ = nullptr;          // set by the owner before linking
    std::coroutine_handle<> handle_{};    // set by the owner before linking; used by notify_
    wait_state state_ = wait_state::idle; // guarded by the lock
    outcome outcome_ = outcome::none;     // guarded by the lock until `done`
    bool stop_seen_ = false;         // guarded by the lock: a stop request arrived before linking
    bool keeps_queue_ = false;       // the operation state holds a queue reference (keep_queue()):
                                     // set by its owner, or by its completer before deferring the
                                     // resumption (which orders it before the owner reads it)
    bool deferred_delivery_ = false; // set by the owner before starting: its completion is
                                     // delivered later and can still be cancelled (the Asio
                                     // adapter), so a value taken at once keeps its permit
    select_claim* claim_ = nullptr;  // set by the owner before starting: this receive is branch
    int branch_ = 0;                 // `branch_` of a select, completed only by whoever wins
                                     // `*claim_` (detail/select_claim.hpp); null otherwise
};

/// A waiting receive: the value storage a value is granted into.
template <class T> struct recv_waiter : waiter_base {
    std::optional<T> value_; // written under the lock by the granter; read by the owner after
                             // it resumes (or when it gives an undelivered value back)
};

/// A waiting send: a pointer to the value it offers, owned by the operation.
template <class T> struct send_waiter : waiter_base {
    T* offered_ = nullptr;     // set by the owner before linking; moved from by the granter
    std::exception_ptr error_; // set under the lock when moving `*offered_` threw (outcome failed)
    bool holds_producer_ = false; // set under the lock when linked: the SPMC busy flag stays set
                                  // until the owner calls leave_producer()
};

/// An intrusive doubly linked FIFO of waiters. Not thread-safe: used under the queue's lock.
class waiter_list {
  public:
    bool empty() const noexcept { return head_ == nullptr; }
    waiter_base* front() const noexcept { return head_; }

    void push_back(waiter_base* w) noexcept {
        w->next_ = nullptr;
        w->prev_ = tail_;
        if (tail_ != nullptr) {
            tail_->next_ = w;
        } else {
            head_ = w;
        }
        tail_ = w;
    }

    void erase(waiter_base* w) noexcept {
        (w->prev_ != nullptr ? w->prev_->next_ : head_) = w->next_;
        (w->next_ != nullptr ? w->next_->prev_ : tail_) = w->prev_;
        w->next_ = w->prev_ = nullptr;
    }

    waiter_base* pop_front() noexcept {
        waiter_base* w = head_;
        erase(w);
        return w;
    }

  private:
    waiter_base* head_ = nullptr;
    waiter_base* tail_ = nullptr;
};

/// The one-waiter "list" of an SPMC channel's sender side: only one producer can wait.
/// Not thread-safe: used under the queue's lock.
class single_waiter {
  public:
    bool empty() const noexcept { return w_ == nullptr; }
    waiter_base* front() const noexcept { return w_; }

    void push_back(waiter_base* w) noexcept {
        // Checked in every build: overwriting the waiter would lose the waiting send and its
        // value.
        COCHAN_CHECK(w_ == nullptr, "two sends overlap on one SPMC sender");
        w_ = w;
    }
    void erase([[maybe_unused]] waiter_base* w) noexcept { w_ = nullptr; }
    waiter_base* pop_front() noexcept { return std::exchange(w_, nullptr); }

  private:
    waiter_base* w_ = nullptr;
};

} // namespace cochan::detail
