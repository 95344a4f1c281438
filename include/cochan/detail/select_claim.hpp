// cochan: the decision of one select, shared by its receive waiters (one in each channel).
#pragma once

#include <cochan/detail/lock.hpp>
#include <cochan/detail/waiter.hpp>

#include <atomic>

namespace cochan::detail {

/// Which branch completes a select, decided exactly once. A select over N receivers links one
/// receive waiter in each channel's FIFO; every waiter points here (`waiter_base::claim_`) and
/// knows its branch (`waiter_base::branch_`). Whoever is about to complete such a waiter (a
/// grant, the owner taking a buffered value, the last disconnection) does so under that
/// waiter's channel lock, and must first win the claim for its branch. A channel that loses
/// treats the waiter as gone: it unlinks it without a notification and offers its value or
/// permit to the next waiter. So a value is never granted to a branch that cannot take it, and
/// no lock is ever held across two channels.
///
/// `word_`, the decision (every access atomic; CAS `acq_rel`, loads `acquire`):
///   open                    nobody has decided yet
///   open -> reserved(b)     a completer of branch b whose value move may throw reserves first
///                           (others wait for it to resolve, spinning: it is inside one move)
///   reserved(b) -> b        the move succeeded
///   reserved(b) -> open     the move threw in a grant: the branch stays linked, nothing changed
///   reserved(b) -> abandoned  the move threw in the owner's own take (its co_await rethrows)
///   open -> b               a completer whose move cannot throw decides at once
///   open -> cancelled       the select's stop callback, or its destruction while waiting
///   open -> disconnected    the last branch whose channel ended (see `live_`)
/// Every final value is final.
///
/// `live_`: branches whose channel may still deliver, plus one held by the owner while it links
/// the branches. A channel that ends (its senders gone, or a receiver closed it) takes one away
/// under its lock; whoever takes the last one decides `disconnected`.
///
/// `armed_`: the owner's suspension and the one notification (2 at the start). The completer
/// that decided notifies once, after unlocking (`notify()`); the owner, done linking, takes the
/// other unit. Whichever of the two comes second resumes the coroutine, so it is never resumed
/// from inside its own `await_suspend`.
class select_claim {
  public:
    static constexpr int open = -1;
    static constexpr int cancelled = -2;
    static constexpr int disconnected = -3;
    static constexpr int abandoned = -4;

    /// `wake(self)` resumes the select's owner; `self` is passed back to it.
    select_claim(int branches, void (*wake)(void*) noexcept, void* self) noexcept
        : live_(branches + 1), wake_(wake), self_(self) {}
    select_claim(const select_claim&) = delete;
    select_claim& operator=(const select_claim&) = delete;
    ~select_claim() = default;

    /// The decision, once no reservation is pending: `open`, a branch or a special value.
    int decision() const noexcept {
        for (int spins = 0;; ++spins) {
            const int d = word_.load(std::memory_order_acquire);
            if (d < reserved_bit) return d;
            spin_backoff(spins, 64);
        }
    }
    bool decided() const noexcept { return decision() != open; }

    /// Decides for `who` if nobody has. True: decided for `who`.
    bool decide(int who) noexcept { return swap_open(who); }

    /// Reserves the decision for `who` before a move that may throw: true if reserved; then
    /// exactly one of commit() and release() follows.
    bool reserve(int who) noexcept { return swap_open(who | reserved_bit); }
    void commit(int who) noexcept { word_.store(who, std::memory_order_release); }
    /// The reserved move threw: undecided again.
    void release() noexcept { word_.store(open, std::memory_order_release); }

    /// A branch's channel ended (under that channel's lock). True when this was the last live
    /// branch and the select is now decided `disconnected` by the caller, who then completes
    /// the waiter; false if other branches may still deliver, or another decision was made.
    bool branch_ended() noexcept {
        if (live_.fetch_sub(1, std::memory_order_acq_rel) != 1) return false;
        return decide(disconnected);
    }

    /// A stop request or an Asio cancellation: decides `cancelled` if nobody has decided, and
    /// then sends the decision's notification. Any thread.
    void cancel() noexcept {
        if (decide(cancelled)) notify();
    }

    /// The one notification of the decision (a branch's completer, after unlocking, or the
    /// stop callback). See `armed_`.
    void notify() noexcept {
        if (armed_.fetch_sub(1, std::memory_order_acq_rel) == 1) wake_(self_);
    }
    /// The owner is done linking: true if it must suspend (the notification is still to come
    /// and will resume it); false if the notification came already (resume now).
    bool suspend() noexcept { return armed_.fetch_sub(1, std::memory_order_acq_rel) != 1; }

    /// The notify function of every branch waiter.
    static void notify_branch(waiter_base* w) noexcept { w->claim_->notify(); }

  private:
    static constexpr int reserved_bit = 1 << 20; // branch | reserved_bit: see word_

    bool swap_open(int to) noexcept {
        for (int spins = 0;; ++spins) {
            int expected = open;
            if (word_.compare_exchange_strong(expected, to, std::memory_order_acq_rel,
                                              std::memory_order_acquire)) {
                return true;
            }
            if (expected < reserved_bit) return false; // decided by someone else
            spin_backoff(spins, 64);                   // a reservation resolves within one move
        }
    }

    std::atomic<int> word_{open};
    std::atomic<int> live_;
    std::atomic<int> armed_{2};
    void (*wake_)(void*) noexcept;
    void* self_;
};

} // namespace cochan::detail
