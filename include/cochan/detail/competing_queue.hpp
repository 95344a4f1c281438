// cochan: the competing-consumer core shared by all four channel kinds.
#pragma once

#include <cochan/detail/config.hpp>
#include <cochan/detail/lock.hpp>
#include <cochan/detail/trampoline.hpp>
#include <cochan/detail/waiter.hpp>
#include <cochan/result.hpp>

#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex> // std::lock_guard, std::unique_lock
#include <optional>
#include <type_traits>
#include <utility>

namespace cochan::detail {

/// Producer-side policy: SPMC has one producer, so at most one sender can wait and a single
/// slot replaces the sender list; MPMC keeps a FIFO list.
struct single_producer {
    using send_waiters = waiter_slot;
    static constexpr bool multi = false;
};
struct multi_producer {
    using send_waiters = waiter_list;
    static constexpr bool multi = true;
};

/// A waiting receive: a slot the value is granted into.
template <class T> struct recv_waiter : waiter_base {
    std::optional<T> slot_; // written under the lock by the granter; read by the owner after
                            // it resumes (or in its destructor, to hand an unused grant back)
};

/// A waiting send: a pointer to the value it offers, owned by the awaitable.
template <class T> struct send_waiter : waiter_base {
    T* offered_ = nullptr;     // set by the owner before linking; moved from by the granter
    std::exception_ptr error_; // set under the lock when moving `*offered_` threw (outcome failed)
    bool holds_producer_ = false; // set under the lock when linked: the SPMC busy flag stays set
                                  // until the owner calls leave_producer()
};

/// One lock, one storage, two intrusive FIFO waiter lists.
///
/// State, all guarded by `mutex_` unless said otherwise:
/// - `storage_`: buffered values (a `ring` or a `segmented_queue`).
/// - outstanding grants (bounded only): values granted to waiting receivers that have not yet
///   taken them, `granted_ - released_`. They count against the capacity:
///   `storage_.size() + outstanding <= capacity_`. `granted_` is guarded by the lock;
///   `released_` is incremented by receivers without it (see release_grant()).
/// - `recv_waiters_`: receivers waiting for a value. Invariant: non-empty only while
///   `storage_` is empty (a value arriving while a receiver waits is granted to it at once).
/// - `send_waiters_` (bounded only ever holds any): senders waiting for a slot. Invariant:
///   non-empty only while no slot is free.
/// - `senders_`, `receivers_`: connected endpoints. Zero senders means receivers drain, then
///   see `disconnected`; zero receivers means every send fails and the buffer is destroyed.
///
/// Transitions (each under the lock; waiters completed are notified after unlocking):
/// - a value arrives: to the oldest receiver waiter (a grant), else into `storage_`;
/// - a slot frees (a value taken from `storage_`, a grant taken by its receiver): the oldest
///   sender waiter's value moves in as above and that sender completes;
/// - a granted receiver is destroyed before taking its value: the value goes to the next
///   receiver waiter, else back to the head of `storage_` (so a grant is never stranded);
/// - a stop request: the waiter, if still linked, is unlinked and completes `cancelled`;
/// - the last sender or receiver disconnects: every waiter on the other side completes.
/// Lifetime: `refs_` counts endpoint objects (atomic, acq_rel on release); the last one deletes.
template <class T, class Storage, class Producers> class competing_queue {
  public:
    using value_type = T;
    static constexpr bool bounded = Storage::bounded;
    static constexpr bool multi_producer = Producers::multi;

    template <class... Args>
    explicit competing_queue(std::size_t capacity, Args&&... storage_args)
        : storage_(std::forward<Args>(storage_args)...), capacity_(capacity) {}

    competing_queue(const competing_queue&) = delete;
    competing_queue& operator=(const competing_queue&) = delete;

    // ---- lifetime and endpoint counts -------------------------------------------------------

    void retain() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }

    /// Drops one endpoint object's reference; deletes the queue after the last.
    void release() noexcept {
        // acq_rel: the deleting thread must see every other endpoint's last writes.
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }

    void add_sender() noexcept {
        std::lock_guard lock(mutex_);
        ++senders_;
    }
    void add_receiver() noexcept {
        std::lock_guard lock(mutex_);
        ++receivers_;
    }

    /// A sender endpoint disconnects (destroyed or closed). The last one wakes every waiter.
    void remove_sender() noexcept {
        completion_batch batch;
        std::unique_lock lock(mutex_);
        if (--senders_ != 0) return;
        // Receivers wait only while the buffer is empty: all of them now see `disconnected`.
        while (!recv_waiters_.empty())
            batch.complete(recv_waiters_.pop_front(), outcome::disconnected);
        // A send can still wait here only if its own endpoint was closed under it (see close()).
        while (!send_waiters_.empty())
            batch.complete(send_waiters_.pop_front(), outcome::disconnected);
        lock.unlock();
        batch.notify_all();
    }

    /// A receiver endpoint disconnects. The last one wakes every sender and destroys the
    /// buffered values outside the lock, after the senders are woken.
    void remove_receiver() noexcept {
        completion_batch batch;
        std::unique_lock lock(mutex_);
        if (--receivers_ != 0) return;
        while (!send_waiters_.empty())
            batch.complete(send_waiters_.pop_front(), outcome::disconnected);
        // Only an operation that outlived its receiver can still wait here (an Asio operation,
        // which keeps the queue alive itself): it sees the disconnection too.
        while (!recv_waiters_.empty())
            batch.complete(recv_waiters_.pop_front(), outcome::disconnected);
        Storage doomed(std::move(storage_));
        lock.unlock();
        batch.notify_all();
        // `doomed` is destroyed here, outside the lock.
    }

    // ---- queries -----------------------------------------------------------------------------

    std::size_t size() noexcept {
        std::lock_guard lock(mutex_);
        return storage_.size();
    }
    std::size_t capacity() const noexcept { return capacity_; }
    bool senders_gone() noexcept {
        std::lock_guard lock(mutex_);
        return senders_ == 0;
    }
    bool receivers_gone() noexcept {
        std::lock_guard lock(mutex_);
        return receivers_ == 0;
    }

    // ---- sending -----------------------------------------------------------------------------

    enum class send_status { ok, full, disconnected, cancelled };

    /// Offers `v` without waiting. On `ok`, `v` was moved from; otherwise it is untouched.
    /// Exception safety: strong (a throwing move of `T` changes nothing and propagates).
    send_status try_send(T& v) {
        completion_batch batch;         // destroyed last: notifies after the lock is released
        producer_scope producer(*this); // and after the SPMC busy flag is cleared
        std::unique_lock lock(mutex_);
        if (receivers_ == 0) return send_status::disconnected;
        if constexpr (bounded) {
            if (!send_waiters_.empty()) {
                // An SPMC sender's own send is waiting: this one overlaps it (rule 11).
                COCHAN_CHECK(multi_producer, "two sends overlap on one SPMC sender");
                // A waiting sender is older than this one. A slot freed without the lock
                // (release_grant() before it admits) belongs to it: admit it first, so this
                // call never barges past it (rule 2).
                admit_sender(batch);
                if (!send_waiters_.empty()) return send_status::full;
            }
        }
        if (!slot_free()) return send_status::full;
        deliver(v, batch);
        return send_status::ok;
    }

    /// The first step of a waiting send: completes it now, or links `w` and returns true (the
    /// caller suspends). A stop seen before linking completes it as cancelled. While linked,
    /// an SPMC send stays marked busy until its owner calls `leave_producer()`.
    bool send_or_wait(send_waiter<T>& w) {
        completion_batch batch;
        producer_scope producer(*this);
        std::unique_lock lock(mutex_);
        if (w.stop_seen_) {
            w.state_ = wait_state::done;
            w.outcome_ = outcome::cancelled;
        } else if (receivers_ == 0) {
            w.state_ = wait_state::done;
            w.outcome_ = outcome::disconnected;
        } else if (slot_free() && send_waiters_.empty()) {
            deliver(*w.offered_, batch);
            w.state_ = wait_state::done;
            w.outcome_ = outcome::ok;
        } else {
            w.state_ = wait_state::waiting;
            send_waiters_.push_back(&w);
            retain(); // a linked waiter keeps the queue alive until its owner is done
            w.keeps_queue_ = true;
            if constexpr (bounded) {
                // Dekker with release_grant(), which frees a slot without the lock: either it
                // sees this flag and admits us under the lock, or we see its release here.
                send_waiting_.store(true, std::memory_order_seq_cst);
                if (slot_free()) admit_sender(batch, &w);
            }
            if (w.state_ == wait_state::waiting) {
                w.holds_producer_ = true;
                producer.keep();
                return true;
            }
        }
        return false;
    }

    // ---- receiving ---------------------------------------------------------------------------

    /// Takes the oldest buffered value without waiting. The value is moved once, straight into
    /// the result. Exception safety: strong (if `T`'s move throws, the value stays buffered).
    recv_result<T> try_recv() {
        completion_batch batch;
        std::unique_lock lock(mutex_);
        if (storage_.empty()) {
            return recv_result<T>(std::in_place_index<1>,
                                  senders_ == 0 ? recv_errc::disconnected : recv_errc::empty);
        }
        if constexpr (std::is_nothrow_move_constructible_v<T>) {
            recv_result<T> r(std::in_place, std::move(storage_.front()));
            storage_.pop_front();
            if constexpr (bounded) admit_sender(batch);
            return r;
        } else {
            // Pops the moved-from head once the result is built, still under the lock; if
            // building it threw, the value stays at the head.
            struct pop_on_success {
                competing_queue& q;
                completion_batch& batch;
                int exceptions = std::uncaught_exceptions();
                ~pop_on_success() {
                    if (std::uncaught_exceptions() == exceptions) {
                        q.storage_.pop_front();
                        if constexpr (bounded) q.admit_sender(batch);
                    }
                }
            } pop{*this, batch};
            return recv_result<T>(std::in_place, std::move(storage_.front()));
        }
    }

    /// The first step of a waiting receive: completes it now, or links `w` and returns true.
    /// `reserve`: a value taken at once keeps its slot, as a grant does, until the receiver
    /// releases it (release_grant) or hands it back (hand_back). An operation whose completion
    /// is delivered later and can still be cancelled (the Asio adapter) needs this: handing the
    /// value back must find room.
    bool recv_or_wait(recv_waiter<T>& w, bool reserve = false) {
        completion_batch batch;
        std::unique_lock lock(mutex_);
        if (w.stop_seen_) {
            w.state_ = wait_state::done;
            w.outcome_ = outcome::cancelled;
        } else if (!storage_.empty()) {
            if (bounded && reserve) {
                w.slot_.emplace(std::move(storage_.front()));
                storage_.pop_front();
                if constexpr (bounded) ++granted_; // the slot stays taken: no sender admitted
                w.outcome_ = outcome::granted;
            } else {
                take(w.slot_, batch);
                w.outcome_ = outcome::ok;
            }
            w.state_ = wait_state::done;
        } else if (senders_ == 0) {
            w.state_ = wait_state::done;
            w.outcome_ = outcome::disconnected;
        } else {
            w.state_ = wait_state::waiting;
            recv_waiters_.push_back(&w);
            retain(); // a linked waiter keeps the queue alive until its owner is done
            w.keeps_queue_ = true;
            return true;
        }
        return false;
    }

    /// A granted receiver took its value: the slot its grant held frees (bounded only). Takes
    /// the lock only when a sender may be waiting for that slot.
    void release_grant() noexcept {
        // seq_cst, both: Dekker with send_or_wait() (flag store, then slot_free() load).
        released_.fetch_add(1, std::memory_order_seq_cst);
        // The slot is free but nobody has been admitted to it yet: a try_send on another thread
        // can run here (it admits the waiting sender first; see try_send()).
        COCHAN_DETAIL_INTERLEAVE(release_grant);
        if (!send_waiting_.load(std::memory_order_seq_cst)) return;
        completion_batch batch;
        std::unique_lock lock(mutex_);
        admit_sender(batch);
    }

    /// A receiver that holds a value it will not return to its caller (its coroutine was
    /// destroyed after the grant, or moving the value out to the caller threw) gives it back:
    /// to the next receiver waiter, else to the head of the buffer. A grant is never stranded.
    /// `was_grant`: the value was granted and holds one of the outstanding grants' slots. A value
    /// the receiver popped itself gave its slot up already; it goes back only if a slot is free,
    /// and is destroyed otherwise (docs/design.md, exception safety).
    void hand_back(std::optional<T>& slot, bool was_grant) noexcept {
        completion_batch batch;
        std::unique_lock lock(mutex_);
        if constexpr (bounded) {
            if (was_grant) --granted_;
        }
        try {
            if (receivers_ != 0 && slot_free()) {
                deliver_front(*slot, batch);
                slot.reset(); // a moved-from value: its destructor runs under the lock
            }
        } catch (...) {
            // T's move threw while handing the value on: it stays in `slot` and is destroyed
            // below. The channel stays consistent.
        }
        if constexpr (bounded) admit_sender(batch);
        lock.unlock();
        slot.reset(); // a value nobody can take is destroyed outside the lock
    }

    // ---- cancellation ------------------------------------------------------------------------

    /// A stop request for a receive waiter. Runs on the thread that requested the stop.
    void cancel_recv(waiter_base& w) noexcept { cancel(w, recv_waiters_); }
    /// A stop request for a send waiter.
    void cancel_send(waiter_base& w) noexcept { cancel(w, send_waiters_); }

    /// The waiter's owner is destroyed while it may still be linked: unlink it. Afterwards the
    /// waiter is `done` and its `outcome_` says whether it holds a grant to hand back.
    void unlink_recv(waiter_base& w) noexcept { unlink(w, recv_waiters_); }
    void unlink_send(waiter_base& w) noexcept { unlink(w, send_waiters_); }

    // ---- debug checks for the single producer ------------------------------------------------

    /// Clears the SPMC busy flag set by a send that waited (see send_or_wait).
    void leave_producer() noexcept {
#ifndef NDEBUG
        if constexpr (!multi_producer) producer_busy_.store(false, std::memory_order_relaxed);
#endif
    }

  private:
    ~competing_queue() = default;

    /// Marks a send on the SPMC sender busy for its duration; two overlapping sends assert in
    /// debug builds (release builds skip the check and its atomic operation). relaxed
    /// suffices: the flag only detects misuse, it orders nothing.
    class producer_scope {
      public:
        explicit producer_scope([[maybe_unused]] competing_queue& q) noexcept {
#ifndef NDEBUG
            if constexpr (!multi_producer) {
                q_ = &q;
                const bool busy = q.producer_busy_.exchange(true, std::memory_order_relaxed);
                COCHAN_ASSERT(!busy, "two sends overlap on one SPMC sender");
            }
#endif
        }
        producer_scope(const producer_scope&) = delete;
        producer_scope& operator=(const producer_scope&) = delete;
        ~producer_scope() {
            if (q_ != nullptr) q_->leave_producer();
        }
        void keep() noexcept {
            q_ = nullptr;
        }

      private:
        competing_queue* q_ = nullptr; // set only when the debug check is on
    };

    bool slot_free() const noexcept {
        if constexpr (bounded) {
            // Outstanding grants: made under the lock, released by their receivers outside it.
            const std::size_t outstanding = granted_ - released_.load(std::memory_order_seq_cst);
            return storage_.size() + outstanding < capacity_;
        } else {
            return true;
        }
    }

    /// Grants `v` to the oldest receiver waiter. Requires one; throws only from `T`'s move,
    /// in which case the waiter stays linked and nothing changed.
    void grant(T& v, completion_batch& batch) {
        auto* r = static_cast<recv_waiter<T>*>(recv_waiters_.front());
        r->slot_.emplace(std::move(v));
        recv_waiters_.pop_front();
        if constexpr (bounded) ++granted_;
        batch.complete(r, outcome::granted);
    }

    /// Puts an accepted value where it belongs: a waiting receiver, else the buffer.
    /// Requires a free slot.
    void deliver(T& v, completion_batch& batch) {
        if (!recv_waiters_.empty()) {
            grant(v, batch);
        } else {
            storage_.push_back(std::move(v));
        }
    }

    /// Like deliver(), but a value that goes back to the buffer goes to its head: it is older
    /// than everything buffered.
    void deliver_front(T& v, completion_batch& batch) {
        if (!recv_waiters_.empty()) {
            grant(v, batch);
        } else {
            storage_.push_front(std::move(v));
        }
    }

    /// Moves the oldest buffered value into `out` and lets a waiting sender into the freed slot.
    void take(std::optional<T>& out, completion_batch& batch) {
        out.emplace(std::move(storage_.front()));
        storage_.pop_front(); // destroys a moved-from value under the lock (docs/design.md)
        if constexpr (bounded) admit_sender(batch);
    }

    /// A slot is free: the oldest waiting sender's value moves in and that sender completes.
    /// If its move throws, the sender completes with the exception (its caller sees it) and
    /// the operation that freed the slot is unaffected.
    /// `self`: the sender calling this from send_or_wait(); it completes without a notification
    /// (it has not suspended yet).
    void admit_sender(completion_batch& batch, waiter_base* self = nullptr) noexcept {
        while (!send_waiters_.empty() && slot_free()) {
            auto* s = static_cast<send_waiter<T>*>(send_waiters_.pop_front());
            outcome o = outcome::ok;
            try {
                deliver(*s->offered_, batch);
            } catch (...) {
                s->error_ = std::current_exception();
                o = outcome::failed;
            }
            if (s == self) {
                s->state_ = wait_state::done;
                s->outcome_ = o;
            } else {
                batch.complete(s, o);
            }
        }
        // A stale `true` (left by a cancelled or disconnected sender) only costs the next
        // release_grant() one lock; `false` is stored only when nobody waits.
        if (send_waiters_.empty() && send_waiting_.load(std::memory_order_relaxed)) {
            send_waiting_.store(false, std::memory_order_relaxed);
        }
    }

    template <class List> void cancel(waiter_base& w, List& list) noexcept {
        std::unique_lock lock(mutex_);
        if (w.state_ == wait_state::waiting) {
            list.erase(&w);
            w.state_ = wait_state::done;
            w.outcome_ = outcome::cancelled;
            lock.unlock();
            w.notify_(&w);
        } else if (w.state_ == wait_state::idle) {
            w.stop_seen_ = true; // the owner has not linked yet; it checks this under the lock
        }
    }

    template <class List> void unlink(waiter_base& w, List& list) noexcept {
        std::lock_guard lock(mutex_);
        if (w.state_ == wait_state::waiting) {
            list.erase(&w);
            w.state_ = wait_state::done;
            w.outcome_ = outcome::cancelled;
        }
    }

    channel_lock mutex_;
    Storage storage_;                               // guarded by mutex_
    std::size_t granted_ = 0;                       // guarded by mutex_ (bounded only)
    std::atomic<std::size_t> released_{0};          // grants taken; see release_grant()
    std::atomic<bool> send_waiting_{false};         // a sender may wait; see release_grant()
    const std::size_t capacity_;                    // immutable
    waiter_list recv_waiters_;                      // guarded by mutex_
    typename Producers::send_waiters send_waiters_; // guarded by mutex_
    std::size_t senders_ = 1;                       // guarded by mutex_
    std::size_t receivers_ = 1;                     // guarded by mutex_
    std::atomic<std::size_t> refs_{2};              // endpoint objects alive; see release()
    std::atomic<bool> producer_busy_{false};        // SPMC debug check only; see producer_scope
};

} // namespace cochan::detail
