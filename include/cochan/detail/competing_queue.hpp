// cochan: the competing-consumer queue shared by all four channel kinds (docs/design.md's
// glossary: "the queue").
#pragma once

#include <cochan/detail/after_move.hpp>
#include <cochan/detail/config.hpp>
#include <cochan/detail/lock.hpp>
#include <cochan/detail/segmented_queue.hpp>
#include <cochan/detail/select_claim.hpp>
#include <cochan/detail/trampoline.hpp>
#include <cochan/detail/waiter.hpp>
#include <cochan/result.hpp>

#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex> // std::lock_guard
#include <optional>
#include <type_traits>
#include <utility>

namespace cochan::detail {

/// Producer-side policy: SPMC has one producer, so at most one sender can wait and a
/// `single_waiter` replaces the sender list; MPMC keeps a FIFO list.
struct single_producer {
    using send_waiters = single_waiter;
    static constexpr bool multi = false;
};
struct multi_producer {
    using send_waiters = waiter_list;
    static constexpr bool multi = true;
};

/// The queue's memory: one reference per endpoint object, per linked waiter and per adapter
/// reference (`queue_ref`); the last release() deletes it. Thread-safe.
template <class Queue> class counted_lifetime {
  public:
    void retain() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }

    /// Drops one reference; deletes the queue after the last.
    void release() noexcept {
        // acq_rel: the deleting thread must see every other holder's last writes.
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete static_cast<Queue*>(this);
    }

  protected:
    counted_lifetime() = default;
    ~counted_lifetime() = default;

  private:
    std::atomic<std::size_t> refs_{2}; // the first sender and receiver
};

/// One lock, one storage, two intrusive FIFO waiter lists.
///
/// Words (docs/design.md, glossary): a *cell* is where `storage_` keeps one buffered value; a
/// *permit* is one unit of a bounded channel's capacity, held by every buffered value and by
/// every value granted to a receiver that has not taken it yet; a waiter's *value storage* is
/// `recv_waiter::value_`.
///
/// State, all guarded by `mutex_` unless said otherwise:
/// - `storage_`: buffered values (a `ring` or a `segmented_queue`); it alone knows the
///   capacity.
/// - permits held by grants (bounded only): values granted to receivers that have not yet
///   taken them, `grants_made_ - grants_released_`. `storage_.size()` plus these never exceed
///   the capacity. `grants_made_` is guarded by the lock; `grants_released_` is incremented by
///   receivers without it (see release_permit()).
/// - `recv_waiters_`: receivers waiting for a value. Invariant: non-empty only while
///   `storage_` is empty (a value arriving while a receiver waits is granted to it at once).
/// - `send_waiters_` (bounded only ever holds any): senders waiting for a permit. Invariant:
///   non-empty only while no permit is free.
/// - `senders_`, `receivers_`: connected endpoints. Zero senders means receivers drain, then
///   see `disconnected`; zero receivers means every send fails and the buffer is destroyed.
/// - `closed_`: a receiver closed the channel (`rx.close()`): every send fails, receivers
///   drain, then see `disconnected`, as with zero senders; the buffer stays.
///
/// Transitions (each under the lock; waiters completed are notified after unlocking):
/// - a value arrives: to the oldest receiver waiter (a grant), else into `storage_`;
/// - a permit frees (a value taken from `storage_`, a grant taken by its receiver): the oldest
///   sender waiter's value moves in as above and that sender completes;
/// - a receiver gives a value back (destroyed after its grant, or its delivery cancelled):
///   the value goes to the next receiver waiter, else back to the head of `storage_` (so a
///   grant is never stranded);
/// - a stop request: the waiter, if still linked, is unlinked and completes `cancelled`;
/// - the last sender or receiver disconnects: every waiter on the other side completes.
///
/// Its callers are the operation states of detail/op_state.hpp and the endpoints; nothing
/// else reaches it.
template <class T, class Storage, class Producers>
class competing_queue : public counted_lifetime<competing_queue<T, Storage, Producers>> {
    friend counted_lifetime<competing_queue>;

  public:
    using value_type = T;
    using producers = Producers;
    static constexpr bool bounded = Storage::bounded;
    static constexpr bool multi_producer = Producers::multi;
    /// An awaitable's first step may complete it in await_ready (value_hint, cell_hint).
    static constexpr bool starts_in_await_ready = true;

    template <class... Args>
    explicit competing_queue(Args&&... storage_args)
        : storage_(std::forward<Args>(storage_args)...) {}

    competing_queue(const competing_queue&) = delete;
    competing_queue& operator=(const competing_queue&) = delete;

    // ---- endpoint counts ---------------------------------------------------------------------

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
        lock_section lock(mutex_);
        if (--senders_ != 0) return;
        // Receivers wait only while the buffer is empty: all of them now see `disconnected`.
        end_receivers(batch);
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
        lock_section lock(mutex_);
        if (--receivers_ != 0) return;
        while (!send_waiters_.empty())
            batch.complete(send_waiters_.pop_front(), outcome::disconnected);
        // Only an operation that outlived its receiver can still wait here (an Asio operation
        // or a select, which keep the queue alive themselves): it sees the disconnection too.
        end_receivers(batch);
        Storage doomed(std::move(storage_));
        [[maybe_unused]] given_back_type doomed_given_back(std::move(given_back_));
        lock.unlock();
        batch.notify_all();
        // `doomed` and `doomed_given_back` are destroyed here, outside the lock.
    }

    // ---- queries -----------------------------------------------------------------------------

    std::size_t size() noexcept {
        std::lock_guard lock(mutex_);
        return storage_.size();
    }
    std::size_t capacity() const noexcept requires bounded { return storage_.capacity(); }
    /// Connected sender (receiver) endpoints: neither destroyed nor closed.
    std::size_t sender_count() noexcept {
        std::lock_guard lock(mutex_);
        return senders_;
    }
    std::size_t receiver_count() noexcept {
        std::lock_guard lock(mutex_);
        return receivers_;
    }
    /// No value will arrive any more: every sender is gone or a receiver closed the channel
    /// (buffered values, or on a rendezvous values given back, may remain: see
    /// receiving_ends(), which also waits for those).
    bool sending_ended() noexcept {
        std::lock_guard lock(mutex_);
        return senders_ == 0 || closed_;
    }
    /// Every send fails from now on: every receiver is gone or a receiver closed the channel.
    bool sending_refused() noexcept {
        std::lock_guard lock(mutex_);
        return sends_refused();
    }

    // ---- receiver-side close -----------------------------------------------------------------

    /// `rx.close()`: closes the channel for sending. Waiting senders complete `disconnected`
    /// (their values stay theirs); waiting receivers, which wait only while nothing is
    /// buffered, complete `disconnected`; later sends fail `disconnected`; receivers drain what
    /// is buffered, then see `disconnected`. Idempotent.
    void close_sending() noexcept {
        completion_batch batch;
        lock_section lock(mutex_);
        if (closed_) return;
        closed_ = true;
        while (!send_waiters_.empty())
            batch.complete(send_waiters_.pop_front(), outcome::disconnected);
        end_receivers(batch);
        lock.unlock();
        batch.notify_all();
    }

    // ---- sending -----------------------------------------------------------------------------

    enum class send_status { ok, full, disconnected };

    /// Offers `v` without waiting. On `ok`, `v` was moved from; otherwise it is untouched.
    /// Exception safety: strong (a throwing move of `T` changes nothing and propagates).
    send_status try_send(T& v) {
        completion_batch batch;         // destroyed last: notifies after the lock is released
        producer_scope producer(*this); // and after the SPMC busy flag is cleared
        lock_section lock(mutex_);
        if (sends_refused()) return send_status::disconnected;
        if constexpr (bounded) {
            if (!send_waiters_.empty()) {
                // An SPMC sender's own send is waiting: this one overlaps it, and an SPMC sender
                // is one producer (docs/contract.md, rule 11).
                COCHAN_CHECK(multi_producer, "two sends overlap on one SPMC sender");
                // A waiting sender is older than this one. A permit freed without the lock
                // (release_permit() before it admits) belongs to it: admit it first, so this
                // call never barges past it (docs/contract.md, rule 2).
                admit_senders(batch);
                if (!send_waiters_.empty()) return send_status::full;
            }
        }
        if (!permit_free()) {
            // A rendezvous channel has no permit: a send succeeds only into a waiting receiver.
            if (rendezvous() && grant(v, batch)) return send_status::ok;
            return send_status::full;
        }
        deliver(v, batch);
        return send_status::ok;
    }

    /// The first step of a waiting send: completes it now, or links `w` and returns true (the
    /// caller suspends). A stop seen before linking completes it as cancelled. While linked,
    /// an SPMC send stays marked busy until its owner calls `leave_producer()`.
    bool send_or_wait(send_waiter<T>& w) {
        completion_batch batch;
        producer_scope producer(*this);
        lock_section lock(mutex_);
        if (w.stop_seen_) {
            w.state_ = wait_state::done;
            w.outcome_ = outcome::cancelled;
        } else if (sends_refused()) {
            w.state_ = wait_state::done;
            w.outcome_ = outcome::disconnected;
        } else if (permit_free() && send_waiters_.empty()) {
            deliver(*w.offered_, batch);
            w.state_ = wait_state::done;
            w.outcome_ = outcome::ok;
        } else if (rendezvous() && grant(*w.offered_, batch)) {
            // Rendezvous: a waiting receiver took the value (no sender can be waiting while a
            // receiver does). Otherwise the send waits for a receiver to take it.
            w.state_ = wait_state::done;
            w.outcome_ = outcome::ok;
        } else {
            w.state_ = wait_state::waiting;
            send_waiters_.push_back(&w);
            if constexpr (bounded) {
                // Dekker with release_permit(), which frees a permit without the lock: either
                // it sees this flag and admits us under the lock, or we see its release here.
                send_waiting_.store(true, std::memory_order_seq_cst);
                if (permit_free()) admit_senders(batch, &w);
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

    /// Takes the oldest buffered value without waiting (on a rendezvous channel: a value given
    /// back, else the oldest waiting sender's). The value is moved once, straight into the
    /// result. Exception safety: strong (if `T`'s move throws, the value stays where it was:
    /// buffered, given back, or with its sender, which keeps waiting).
    recv_result<T> try_recv() {
        return try_recv_as(
            [](T&& v) { return recv_result<T>(std::in_place, std::move(v)); },
            [](recv_errc none) { return recv_result<T>(std::in_place_index<1>, none); });
    }

    /// try_recv() with the caller's result: `make(T&&)` builds it under the lock, moving the
    /// value once (a prvalue returned as it is, so built in place: detail/after_move.hpp); with
    /// no value, `none(recv_errc)` builds it once the lock is released (`empty`, or
    /// `disconnected` when the channel has ended), so it may go on to another channel
    /// (try_select). Exception safety: strong, for a `make` that throws only from `T`'s move.
    template <class Make, class None>
    std::invoke_result_t<Make&, T&&> try_recv_as(Make make, None none) {
        recv_errc why{};
        {
            completion_batch batch;
            lock_section lock(mutex_);
            if (!storage_.empty()) {
                // Pops the moved-from head once the result is built, still under the lock; if
                // building it threw, the value stays at the head.
                auto pop = on_moved<T>([&]() noexcept {
                    storage_.pop_front();
                    if constexpr (bounded) admit_senders(batch);
                });
                return make(std::move(storage_.front()));
            }
            if (T* v = rendezvous_source()) {
                auto taken = on_moved<T>([&]() noexcept { rendezvous_taken(batch); });
                return make(std::move(*v));
            }
            why = receiving_ends() ? recv_errc::disconnected : recv_errc::empty;
        }
        return none(why);
    }

    /// Takes up to `max` buffered values into `out` (`out.push_back(T&&)`), oldest first, in one
    /// lock section: each value taken frees its permit and admits waiting senders in FIFO order
    /// (whose values may join the batch). `empty` or `disconnected` when it took none.
    /// `out.push_back` runs under the lock, like `T`'s move (reserve `out` to keep it short).
    /// Exception safety: if `push_back` throws, the values taken so far stay in `out`; the one
    /// being moved and all later ones stay in the channel, in order (on a rendezvous, with their
    /// waiting senders).
    template <class Out> recv_result<std::size_t> try_recv_many(Out& out, std::size_t max) {
        completion_batch batch; // destroyed after the lock: notifies admitted senders
        lock_section lock(mutex_);
        std::size_t n = 0;
        while (n < max && !storage_.empty()) {
            out.push_back(std::move(storage_.front()));
            storage_.pop_front();
            ++n;
            if constexpr (bounded) admit_senders(batch);
        }
        // A rendezvous: each value moves once, from where it waits (given back, or a waiting
        // sender's) into `out`, and its sender completes only once that move succeeded.
        while (n < max) {
            T* v = rendezvous_source();
            if (v == nullptr) break;
            out.push_back(std::move(*v));
            rendezvous_taken(batch);
            ++n;
        }
        if (n != 0) return recv_result<std::size_t>(std::in_place, n);
        return recv_result<std::size_t>(
            std::in_place_index<1>, receiving_ends() ? recv_errc::disconnected : recv_errc::empty);
    }

    /// The first step of a waiting receive: completes it now, or links `w` and returns true.
    /// A value taken at once by a waiter with `deferred_delivery_` keeps its permit, as a grant
    /// does (outcome `granted`), until the receiver releases it (release_permit) or gives it
    /// back (give_back): its delivery can still be cancelled, and giving it back must find room.
    /// A select's branch (`claim_` set) takes a value only by winning the claim, and completes
    /// `cancelled` without linking once its select is decided; one whose channel has ended
    /// completes `disconnected` (the owner counts it, see select_claim::branch_ended).
    bool recv_or_wait(recv_waiter<T>& w) { return recv_step(w, true); }

    /// The Asio adapter's immediate completion: if recv_or_wait() would complete `w` at once (a
    /// value taken, as it takes one; or the channel ended), does so and returns true; otherwise
    /// returns false and leaves `w` idle and unlinked, touching nothing (the caller starts a
    /// waiting operation instead).
    bool recv_at_once(recv_waiter<T>& w) {
        recv_step(w, false);
        return w.state_ == wait_state::done; // `w` is not linked: only the caller sees it
    }

    /// What take_at_once() found.
    enum class take_status { taken, empty, ended };

    /// The first step of a plain awaitable receive (no stop token, not a select's branch, its
    /// value delivered at once): in one lock section, moves the oldest value into `out` (the
    /// awaitable's own storage; the value's permit frees as it leaves the buffer, as for
    /// try_recv), or finds the channel empty, or ended. `empty` leaves everything untouched: the
    /// awaitable then starts a waiting receive. Exception safety: strong.
    /// Always inline: this is the whole of a receive that finds a value (a consumer draining a
    /// buffer), which g++ otherwise calls out of line (docs/decisions.md, D-027).
    COCHAN_DETAIL_INLINE take_status take_at_once(std::optional<T>& out) {
        completion_batch batch;
        lock_section lock(mutex_);
        if (!storage_.empty()) {
            take(out, batch);
            return take_status::taken;
        }
        if (rendezvous() && take_rendezvous(out, batch)) return take_status::taken;
        return receiving_ends() ? take_status::ended : take_status::empty;
    }

    // ---- hints, read without the lock --------------------------------------------------------

    /// Any thread, without the lock: a value seemed buffered a moment ago. An awaitable's first
    /// step (await_ready) tries take_at_once() only then, so a receive that will wait takes the
    /// lock once, in its await_suspend. Possibly stale either way, and nothing else may rely on
    /// it: a wrong `true` costs one lock section that finds nothing, a wrong `false` only the
    /// coroutine's suspension bookkeeping (the receive then completes at once in await_suspend).
    bool value_hint() const noexcept { return storage_.size_hint() != 0; }

    /// Any thread, without the lock: a cell seemed free a moment ago (as value_hint(), for a
    /// send's first step; permits held by grants are not counted, so it may say `true` when
    /// none is free). A rendezvous channel has no cell: always false.
    bool cell_hint() const noexcept {
        if constexpr (bounded) {
            return storage_.size_hint() < storage_.capacity();
        } else {
            return true;
        }
    }

  private:
    /// recv_or_wait(); with `link` false, a receive that would wait is left idle instead.
    bool recv_step(recv_waiter<T>& w, bool link) {
        completion_batch batch;
        lock_section lock(mutex_);
        select_claim* claim = w.claim_;
        if (w.stop_seen_ || (claim != nullptr && claim->decided())) {
            w.state_ = wait_state::done;
            w.outcome_ = outcome::cancelled;
        } else if (!storage_.empty() || rendezvous_ready()) {
            if (claim == nullptr) [[likely]] {
                take_now(w, batch);
            } else if (claim->reserve(w.branch_)) {
                try {
                    take_now(w, batch);
                } catch (...) {
                    claim->commit(select_claim::abandoned); // the owner's co_await rethrows
                    throw;
                }
                claim->commit(w.branch_);
            } else {
                w.outcome_ = outcome::cancelled; // decided by another branch meanwhile
            }
            w.state_ = wait_state::done;
        } else if (receiving_ends()) {
            w.state_ = wait_state::done;
            w.outcome_ = outcome::disconnected;
        } else if (link) {
            w.state_ = wait_state::waiting;
            recv_waiters_.push_back(&w);
            return true;
        }
        return false;
    }

  public:
    /// A granted receiver took its value: the permit its grant held frees (bounded only). Takes
    /// the lock only when a sender may be waiting for that permit.
    void release_permit() noexcept {
        // seq_cst, both: Dekker with send_or_wait() (flag store, then permit_free() load).
        grants_released_.fetch_add(1, std::memory_order_seq_cst);
        // The permit is free but nobody has been admitted to it yet: a try_send on another
        // thread can run here (it admits the waiting sender first; see try_send()).
        COCHAN_DETAIL_INTERLEAVE(release_grant);
        if (!send_waiting_.load(std::memory_order_seq_cst)) return;
        completion_batch batch;
        lock_section lock(mutex_);
        admit_senders(batch);
    }

    /// A receiver holds a value it will not deliver (its coroutine was destroyed after the
    /// grant, its delivery was cancelled, or moving the value out to the caller threw): the
    /// value goes to the next receiver waiter, else to the head of the buffer. A grant is never
    /// stranded. A value granted (outcome `granted`) holds a permit, so it always finds room; a
    /// value the receiver took itself gave its permit up already, so it goes back only if a
    /// permit is free, and is destroyed otherwise (docs/design.md, exception safety).
    void give_back(recv_waiter<T>& w) noexcept {
        give_back(w.value_, w.outcome_ == outcome::granted);
    }

    /// give_back() for a value held outside a waiter (take_at_once's); `granted`: it still holds
    /// its permit.
    void give_back(std::optional<T>& value, [[maybe_unused]] bool granted) noexcept {
        completion_batch batch;
        lock_section lock(mutex_);
        if constexpr (bounded) {
            if (granted) --grants_made_;
        }
        try {
            if (receivers_ != 0 && permit_free()) {
                deliver_front(*value, batch);
                value.reset(); // a moved-from value: its destructor runs under the lock
            } else if constexpr (bounded) {
                if (receivers_ != 0 && rendezvous()) {
                    // No cell to go back to: the next waiting receiver, else the next receive.
                    if (!grant(*value, batch)) {
                        given_back_.push_front(std::move(*value)); // bad_alloc: destroyed below
                    }
                    value.reset();
                }
            }
        } catch (...) {
            // T's move threw while handing the value on: it stays in `value` and is destroyed
            // below. The channel stays consistent.
        }
        if constexpr (bounded) admit_senders(batch);
        lock.unlock();
        value.reset(); // a value nobody can take is destroyed outside the lock
    }

    // ---- cancellation ------------------------------------------------------------------------

    /// A stop request for a receive waiter. Runs on the thread that requested the stop.
    void cancel_recv(waiter_base& w) noexcept { cancel(w, recv_waiters_); }
    /// A stop request for a send waiter.
    void cancel_send(waiter_base& w) noexcept { cancel(w, send_waiters_); }

    /// The waiter's owner is destroyed while it may still be linked: unlink it. Afterwards the
    /// waiter is `done` and its `outcome_` says whether it holds a grant to give back.
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
    /// debug builds (release builds skip the check and its atomic operation; the overlaps that
    /// would lose a value are checked under the lock in every build). relaxed suffices: the
    /// flag only detects misuse, it orders nothing.
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

    /// A bounded channel of capacity 0 (`rendezvous<T>()`): no cell, a send completes only
    /// into a receiver.
    bool rendezvous() const noexcept {
        if constexpr (bounded) {
            return storage_.capacity() == 0;
        } else {
            return false;
        }
    }

    /// Under the lock: a receive may take a value now (storage_ is not empty, or a rendezvous
    /// has a value given back or a waiting sender). Sets the outcome; strong if `T`'s move throws.
    void take_now(recv_waiter<T>& w, completion_batch& batch) {
        if (rendezvous()) {
            take_rendezvous(w.value_, batch); // from a waiting sender, or a value given back
            w.outcome_ = outcome::ok;
        } else if (bounded && w.deferred_delivery_) {
            w.value_.emplace(std::move(storage_.front()));
            storage_.pop_front();
            if constexpr (bounded) ++grants_made_; // the permit stays held: no sender admitted
            w.outcome_ = outcome::granted;
        } else {
            take(w.value_, batch);
            w.outcome_ = outcome::ok;
        }
    }

    /// Rendezvous only, under the lock: a value given back waits, or a sender does.
    bool rendezvous_ready() const noexcept {
        return rendezvous() && (!given_back_.empty() || !send_waiters_.empty());
    }

    /// Rendezvous only, under the lock: takes a value given back earlier, else the oldest
    /// waiting sender's value (that send completes `ok`). False if there is neither.
    /// Exception safety: strong (if `T`'s move throws, the value stays where it was).
    bool take_rendezvous(std::optional<T>& out, completion_batch& batch) {
        T* v = rendezvous_source();
        if (v == nullptr) return false;
        out.emplace(std::move(*v)); // if it throws, the value stays where it was
        rendezvous_taken(batch);
        return true;
    }

    /// Under the lock, on a rendezvous channel: the value the next receive takes (the oldest
    /// given back, else the oldest waiting sender's), or null. Always null for an unbounded
    /// channel, or a bounded one with cells.
    T* rendezvous_source() noexcept {
        if constexpr (bounded) {
            if (!rendezvous()) return nullptr;
            if (!given_back_.empty()) return &given_back_.front();
            if (send_waiters_.empty()) return nullptr;
            return static_cast<send_waiter<T>*>(send_waiters_.front())->offered_;
        } else {
            return nullptr;
        }
    }

    /// Under the lock, once the value rendezvous_source() gave was moved out: drops it from
    /// where it was (completing its sender `ok`, notified after the lock).
    void rendezvous_taken([[maybe_unused]] completion_batch& batch) noexcept {
        if constexpr (bounded) {
            if (!given_back_.empty()) {
                given_back_.pop_front();
                return;
            }
            auto* s = static_cast<send_waiter<T>*>(send_waiters_.front());
            send_waiters_.pop_front();
            batch.complete(s, outcome::ok);
        }
    }

    /// Under the lock: a receive can take nothing now and never will, so it completes
    /// `disconnected`: sending ended and nothing given back waits (the caller has found the
    /// buffer empty), or every receiver is gone (the buffer was destroyed with the last one;
    /// only an operation holding its own queue reference, such as an Asio receive or select
    /// launched after that, can still ask).
    bool receiving_ends() const noexcept {
        return ((senders_ == 0 || closed_) && given_back_.empty()) || receivers_ == 0;
    }
    /// Under the lock: every send fails.
    bool sends_refused() const noexcept {
        return receivers_ == 0 || closed_;
    }

    bool permit_free() const noexcept {
        if constexpr (bounded) {
            // Permits held by grants: made under the lock, released by receivers outside it.
            const std::size_t held_by_grants =
                grants_made_ - grants_released_.load(std::memory_order_seq_cst);
            return storage_.size() + held_by_grants < storage_.capacity();
        } else {
            return true;
        }
    }

    /// Grants `v` to the oldest receiver waiter that can take it: false if there is none (`v`
    /// untouched). A select's waiter can take it only by winning its select's claim; one whose
    /// select was decided by another branch is unlinked on the way, unnotified (its owner
    /// unlinks the rest). Throws only from `T`'s move, in which case the waiter stays linked,
    /// its select undecided, and nothing changed.
    bool grant(T& v, completion_batch& batch) {
        while (!recv_waiters_.empty()) {
            auto* r = static_cast<recv_waiter<T>*>(recv_waiters_.front());
            if (r->claim_ == nullptr) [[likely]] {
                r->value_.emplace(std::move(v));
            } else if (!claim_and_move(*r->claim_, r->branch_, r->value_, v)) {
                drop_front_receiver(outcome::cancelled); // its select is decided elsewhere
                continue;
            }
            recv_waiters_.pop_front();
            if constexpr (bounded) ++grants_made_;
            batch.complete(r, outcome::granted);
            return true;
        }
        return false;
    }

    /// Select only: wins `claim` for `branch` and moves `v` into `out`; false (nothing moved)
    /// if the select was decided otherwise. If the move throws, the claim is undecided again.
    static bool claim_and_move(select_claim& claim, int branch, std::optional<T>& out, T& v) {
        if constexpr (std::is_nothrow_move_constructible_v<T>) {
            if (!claim.decide(branch)) return false;
            out.emplace(std::move(v));
        } else {
            if (!claim.reserve(branch)) return false;
            try {
                out.emplace(std::move(v));
            } catch (...) {
                claim.release();
                throw;
            }
            claim.commit(branch);
        }
        return true;
    }

    /// Unlinks the oldest receiver waiter as done with `o`, without notifying it: a select's
    /// branch that lost (its owner, not this channel, finishes it).
    void drop_front_receiver(outcome o) noexcept {
        waiter_base* r = recv_waiters_.pop_front();
        r->state_ = wait_state::done;
        r->outcome_ = o;
    }

    /// Sending ended for good: every receiver waiter completes `disconnected`, except a select's
    /// branch whose select has other branches that may still deliver (or was decided already):
    /// that one is only unlinked, and its select goes on without it.
    void end_receivers(completion_batch& batch) noexcept {
        while (!recv_waiters_.empty()) {
            waiter_base* r = recv_waiters_.front();
            if (r->claim_ == nullptr || r->claim_->branch_ended()) {
                batch.complete(recv_waiters_.pop_front(), outcome::disconnected);
            } else {
                drop_front_receiver(outcome::disconnected);
            }
        }
    }

    /// Puts an accepted value where it belongs: a waiting receiver, else the buffer.
    /// Requires a free permit.
    void deliver(T& v, completion_batch& batch) {
        // The empty check first, inline: a buffered channel's receivers rarely wait.
        if (recv_waiters_.empty() || !grant(v, batch)) storage_.push_back(std::move(v));
    }

    /// Like deliver(), but a value that goes back to the buffer goes to its head: it is older
    /// than everything buffered.
    void deliver_front(T& v, completion_batch& batch) {
        if (recv_waiters_.empty() || !grant(v, batch)) storage_.push_front(std::move(v));
    }

    /// Moves the oldest buffered value into `out` and lets a waiting sender into the freed
    /// permit.
    void take(std::optional<T>& out, completion_batch& batch) {
        out.emplace(std::move(storage_.front()));
        storage_.pop_front(); // destroys a moved-from value under the lock (docs/design.md)
        if constexpr (bounded) admit_senders(batch);
    }

    /// Permits are free: the oldest waiting senders' values move in and those senders complete.
    /// If a sender's move throws, it completes with the exception (its caller sees it) and the
    /// operation that freed the permit is unaffected.
    /// `self`: the sender calling this from send_or_wait(); it completes without a notification
    /// (it has not suspended yet).
    COCHAN_DETAIL_INLINE void admit_senders(completion_batch& batch,
                                            waiter_base* self = nullptr) noexcept {
        // Inline, the common case of every receive: nobody waits and the flag is clear.
        if (send_waiters_.empty() && !send_waiting_.load(std::memory_order_relaxed)) return;
        admit_waiting_senders(batch, self);
    }

    /// admit_senders() when a sender waits or the flag may be stale.
    void admit_waiting_senders(completion_batch& batch, waiter_base* self) noexcept {
        while (!send_waiters_.empty() && permit_free()) {
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
        // release_permit() one lock; `false` is stored only when nobody waits.
        if (send_waiters_.empty() && send_waiting_.load(std::memory_order_relaxed)) {
            send_waiting_.store(false, std::memory_order_relaxed);
        }
    }

    template <class List> void cancel(waiter_base& w, List& list) noexcept {
        lock_section lock(mutex_);
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

    struct no_given_back { // unbounded queues: a value given back always finds its cell
        bool empty() const noexcept { return true; }
    };
    // Rendezvous (capacity 0): values given back (their receiver was destroyed after the grant,
    // or its delivery cancelled) wait here, outside the capacity, for the next receive.
    using given_back_type = std::conditional_t<bounded, segmented_queue<T>, no_given_back>;

    channel_lock mutex_;
    Storage storage_;                                  // guarded by mutex_
    [[no_unique_address]] given_back_type given_back_; // guarded by mutex_ (rendezvous only)
    std::size_t grants_made_ = 0;                      // guarded by mutex_ (bounded only)
    std::atomic<std::size_t> grants_released_{0};      // see release_permit()
    std::atomic<bool> send_waiting_{false};            // a sender may wait; see release_permit()
    waiter_list recv_waiters_;                         // guarded by mutex_
    typename Producers::send_waiters send_waiters_;    // guarded by mutex_
    std::size_t senders_ = 1;                          // guarded by mutex_
    std::size_t receivers_ = 1;                        // guarded by mutex_
    bool closed_ = false; // guarded by mutex_: a receiver closed the channel (close_sending())
    std::atomic<bool> producer_busy_{false}; // SPMC debug check only; see producer_scope
};

} // namespace cochan::detail
