// cochan: the shared state of a one-shot channel (docs/design.md, "One-shot channels"): one
// value, one sender, one receiver. It is a queue in the sense of the operation-state protocol
// (detail/op_state.hpp): `recv_op_state<oneshot_core<T>>` drives it exactly as it drives a
// `competing_queue`, so the receive awaitable, `resume_on`, the blocking calls and their
// deadlines are the channels' own, unchanged.
#pragma once

#include <cochan/detail/after_move.hpp>
#include <cochan/detail/competing_queue.hpp> // counted_lifetime
#include <cochan/detail/config.hpp>
#include <cochan/detail/lock.hpp>
#include <cochan/detail/trampoline.hpp>
#include <cochan/detail/waiter.hpp>
#include <cochan/result.hpp>

#include <cstddef>
#include <exception>
#include <mutex> // std::lock_guard, std::unique_lock
#include <optional>
#include <type_traits>
#include <utility>

namespace cochan::detail {

/// One lock, one value slot, one waiter pointer; one allocation holds it all (the value lives
/// in a `std::optional<T>` member: no ring, no segment).
///
/// State, all guarded by `mutex_` unless said otherwise:
/// - `slot_`, where the one value is:
///     empty  -> stored   try_send() while no receive waits: the value moves into `value_`
///     empty  -> taken    try_send() while a receive waits: a *grant*, moved into that waiter's
///                        value storage, which completes `granted`
///     stored -> taken    try_recv(), or a receive that finds it (completes `ok`, no wait);
///                        or the receiver disconnects (the value is destroyed, see `value_`)
///     taken  -> stored   give_back(): a receive holding the value will not deliver it (its
///                        coroutine was destroyed after the grant, the move out to the caller
///                        threw, an Asio delivery was cancelled) while the receiver is still
///                        connected; with the receiver gone the value is destroyed instead
///   `taken` covers both "granted, not yet delivered" and "delivered": the core never hears
///   from a receive again unless it gives the value back (there is no permit to release, as in
///   every unbounded queue), so it cannot tell the two apart, and need not: in both, nothing
///   is left to receive and nothing more can be sent.
/// - `value_`: engaged exactly while `slot_ == stored`. One exception: remove_receiver()
///   destroys it just after unlocking, having set `slot_ = taken` and `receiver_ = false` under
///   the lock; from then on no one reads or writes it (every path checks those first).
/// - `waiter_`: the one waiting receive. Invariant: non-null only while `slot_ == empty`,
///   `sender_` and `receiver_` (anything else completes it at once). A second receive linking
///   while one waits is a misuse of the one receiver, checked in every build.
/// - `sender_`: the sender is connected (not destroyed, not closed). Cleared once.
/// - `receiver_`: the receiver is connected (not destroyed). Cleared once.
///
/// Who completes whom (each under the lock; the waiter is notified after unlocking, through a
/// `completion_batch` or, for a cancellation, directly, so no user code runs under the lock):
/// - try_send() grants the value to the waiting receive, which resumes on the sender's thread (or
///   through its `resume_on` poster);
/// - remove_sender() (the sender closed or destroyed without sending) completes the waiting
///   receive `disconnected`;
/// - remove_receiver() completes a receive still waiting (one that outlived its receiver, such
///   as an Asio operation holding its own reference) `disconnected`;
/// - cancel_recv() (a stop request, a blocking deadline) completes it `cancelled`.
/// give_back() notifies nobody: while the value is out no receive can be waiting.
///
/// Its callers are the operation states of detail/op_state.hpp and the endpoints of
/// cochan/oneshot.hpp; nothing else reaches it. Thread-safe.
template <class T> class oneshot_core : public counted_lifetime<oneshot_core<T>> {
    friend counted_lifetime<oneshot_core>;

  public:
    using value_type = T;
    /// No permits: `recv_op_state` never calls `release_permit()`, and a value given back
    /// always finds its slot free.
    static constexpr bool bounded = false;
    /// A receive always starts in await_suspend (its await_ready says no): one value per
    /// channel, so a first step in await_ready would save nothing worth a second code path.
    static constexpr bool starts_in_await_ready = false;

    enum class send_status { ok, full, disconnected };

    oneshot_core() noexcept = default;
    oneshot_core(const oneshot_core&) = delete;
    oneshot_core& operator=(const oneshot_core&) = delete;

    // ---- endpoints -----------------------------------------------------------------------------

    /// The sender disconnects (closed or destroyed). A receive waiting for a value that will
    /// never come completes `disconnected`. Idempotent (close(), then destruction).
    void remove_sender() noexcept {
        completion_batch batch;
        std::unique_lock lock(mutex_);
        if (!sender_) return;
        sender_ = false;
        if (waiter_ != nullptr)
            batch.complete(std::exchange(waiter_, nullptr), outcome::disconnected);
        lock.unlock();
        batch.notify_all();
    }

    /// The receiver disconnects (destroyed). Every later send fails `disconnected`; a stored
    /// value is destroyed outside the lock, after a waiter woken here was notified.
    void remove_receiver() noexcept {
        completion_batch batch;
        std::unique_lock lock(mutex_);
        receiver_ = false;
        if (waiter_ != nullptr)
            batch.complete(std::exchange(waiter_, nullptr), outcome::disconnected);
        const bool doomed = slot_ == slot::stored;
        if (doomed) slot_ = slot::taken; // value_ is this call's now: nobody else touches it
        lock.unlock();
        batch.notify_all();
        // The caller's reference keeps the core alive until this returns.
        if (doomed) value_.reset();
    }

    // ---- queries -------------------------------------------------------------------------------

    /// Values stored now: 0 or 1 (a value granted to a waiting receive is not counted).
    std::size_t size() noexcept {
        std::lock_guard lock(mutex_);
        return slot_ == slot::stored ? 1 : 0;
    }
    /// Every send fails from now on: the sender is closed, the receiver is gone, or the value
    /// was sent.
    bool sending_refused() noexcept {
        std::lock_guard lock(mutex_);
        return !sender_ || !receiver_ || slot_ != slot::empty;
    }
    /// A receive can no longer produce a value: it was taken (or granted), or the sender left
    /// without sending.
    bool receiving_ended() noexcept {
        std::lock_guard lock(mutex_);
        return slot_ == slot::taken || (slot_ == slot::empty && !sender_) || !receiver_;
    }

    // ---- sending -------------------------------------------------------------------------------

    /// Offers `v`; never waits. `ok`: `v` was moved from (granted to the waiting receive, else
    /// stored). `disconnected` (the sender was closed or the receiver is gone) and `full` (a
    /// value was already sent) leave `v` untouched. Exception safety: strong (a throwing move of
    /// `T` changes nothing, a waiting receive stays waiting, and the exception propagates).
    send_status try_send(T& v) {
        completion_batch batch; // destroyed last: notifies after the lock is released
        std::unique_lock lock(mutex_);
        if (!sender_ || !receiver_) return send_status::disconnected;
        if (slot_ != slot::empty) return send_status::full;
        if (waiter_ != nullptr) {
            waiter_->value_.emplace(std::move(v)); // if this throws, the waiter stays linked
            batch.complete(std::exchange(waiter_, nullptr), outcome::granted);
            slot_ = slot::taken;
        } else {
            value_.emplace(std::move(v));
            slot_ = slot::stored;
        }
        return send_status::ok;
    }

    // ---- receiving -----------------------------------------------------------------------------

    /// Takes the stored value without waiting, or `empty` (nothing yet, the sender may still
    /// send) or `disconnected` (the value was taken, or the sender left without sending). The
    /// value is moved once, straight into the result. Exception safety: strong (if `T`'s move
    /// throws, the value stays stored).
    recv_result<T> try_recv() {
        std::lock_guard lock(mutex_);
        if (slot_ != slot::stored) {
            const bool may_come = slot_ == slot::empty && sender_;
            return recv_result<T>(std::in_place_index<1>,
                                  may_come ? recv_errc::empty : recv_errc::disconnected);
        }
        // Marks it taken once the result is built, still under the lock (destroying the
        // moved-from husk there, as every queue does: docs/design.md, "Under the lock"); if
        // building it threw, the value stays stored.
        auto take = on_moved<T>([this]() noexcept {
            value_.reset();
            slot_ = slot::taken;
        });
        return recv_result<T>(std::in_place, std::move(*value_));
    }

    /// The first step of a waiting receive (`recv_op_state::start`): completes it now, or links
    /// `w` and returns true. A stop seen before linking cancels it even if a value is stored
    /// (docs/design.md, cancellation). Exception safety: if moving the stored value into `w`
    /// throws, it stays stored and the exception propagates.
    bool recv_or_wait(recv_waiter<T>& w) { return recv_step(w, true); }

    /// The Asio adapter's immediate completion (as competing_queue::recv_at_once): if
    /// recv_or_wait() would complete `w` at once (the value taken, or nothing will ever come),
    /// does so and returns true; otherwise returns false and leaves `w` idle and unlinked.
    bool recv_at_once(recv_waiter<T>& w) {
        recv_step(w, false);
        return w.state_ == wait_state::done; // `w` is not linked: only the caller sees it
    }

    /// A receive holds the value and will not deliver it (`recv_op_state::give_back`): while the
    /// receiver is connected it is stored again, so the receiver's next receive gets it;
    /// otherwise (or if moving it back throws) it is destroyed, outside the lock. Exactly once
    /// either way.
    void give_back(recv_waiter<T>& w) noexcept {
        std::optional<T>& value = w.value_;
        std::unique_lock lock(mutex_);
        COCHAN_ASSERT(slot_ == slot::taken && waiter_ == nullptr, "oneshot: give-back of no value");
        if (receiver_) {
            try {
                value_.emplace(std::move(*value));
                value.reset(); // the moved-from husk, under the lock
                slot_ = slot::stored;
            } catch (...) {
                // T's move threw: the value stays in `value` and is destroyed below.
            }
        }
        lock.unlock();
        value.reset(); // a value nobody can take is destroyed outside the lock
    }

    // ---- cancellation --------------------------------------------------------------------------

    /// A stop request (or a blocking deadline) for the receive `w`. Runs on the requesting
    /// thread. Linked: unlinked, completed `cancelled` and notified after unlocking. Not yet
    /// linked: marks `stop_seen_`, which recv_or_wait() reads under the lock. Done: nothing (a
    /// grant made first wins).
    void cancel_recv(waiter_base& w) noexcept {
        std::unique_lock lock(mutex_);
        if (w.state_ == wait_state::waiting) {
            waiter_ = nullptr; // the one linked waiter is `w`
            w.state_ = wait_state::done;
            w.outcome_ = outcome::cancelled;
            lock.unlock();
            w.notify_(&w);
        } else if (w.state_ == wait_state::idle) {
            w.stop_seen_ = true;
        }
    }

    /// The receive's owner is destroyed while it may still be linked: unlink it, without a
    /// notification. Afterwards `w` is done and its `outcome_` says whether it holds a value to
    /// give back.
    void unlink_recv(waiter_base& w) noexcept {
        std::lock_guard lock(mutex_);
        if (w.state_ == wait_state::waiting) {
            waiter_ = nullptr;
            w.state_ = wait_state::done;
            w.outcome_ = outcome::cancelled;
        }
    }

  private:
    ~oneshot_core() = default; // the last release(); `value_` is empty by then

    /// recv_or_wait(); with `link` false, a receive that would wait is left idle instead.
    bool recv_step(recv_waiter<T>& w, bool link) {
        std::lock_guard lock(mutex_);
        if (w.stop_seen_) {
            w.outcome_ = outcome::cancelled;
        } else if (slot_ == slot::stored) {
            w.value_.emplace(std::move(*value_));
            value_.reset(); // the moved-from husk, under the lock
            slot_ = slot::taken;
            w.outcome_ = outcome::ok;
        } else if (slot_ == slot::empty && sender_ && receiver_) {
            if (!link) return false;
            // Checked in every build: overwriting the waiter would strand the first receive.
            COCHAN_CHECK(waiter_ == nullptr, "two receives overlap on one oneshot receiver");
            w.state_ = wait_state::waiting;
            waiter_ = &w;
            return true;
        } else {
            w.outcome_ = outcome::disconnected; // taken already, or nothing will ever come
        }
        w.state_ = wait_state::done;
        return false;
    }

    enum class slot : unsigned char { empty, stored, taken };

    channel_lock mutex_;
    std::optional<T> value_;           // guarded by mutex_ (see above)
    recv_waiter<T>* waiter_ = nullptr; // guarded by mutex_
    slot slot_ = slot::empty;          // guarded by mutex_
    bool sender_ = true;               // guarded by mutex_
    bool receiver_ = true;             // guarded by mutex_
};

} // namespace cochan::detail
