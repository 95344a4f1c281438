// Types that count their lifecycle events, for checking that channels (and the Asio adapter)
// neither leak, double-destroy, nor copy values they should move.
//
// counted          payload with process-wide counters (constructions, copies, moves, ...)
// throwing_move    move-only payload whose moves throw on demand, with process-wide counters
// tracked, ledger  move-only payload recording, per value, where it ended (received, handed
//                  back or destroyed by the channel) in a ledger the test owns
// counted_handler, handler_counts
//                  move-only completion handler counting the live ones and the invocations
//                  in counters the test owns
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace cochan_test {

// Value type counting constructions, copies, moves and destructions.
// Counters are atomic so payloads may cross threads; call reset() at the
// start of a test and only compare counters after all threads are joined.
// Thread-safe (counters); each instance is Not thread-safe.
struct counted {
    int value = 0;

    // Every construction, including copy and move construction.
    inline static std::atomic<long> constructed{0};
    // Copy/move operations, constructors and assignments alike.
    inline static std::atomic<long> copied{0};
    inline static std::atomic<long> moved{0};
    inline static std::atomic<long> destroyed{0};

    counted() noexcept { ++constructed; }
    explicit counted(int v) noexcept : value(v) { ++constructed; }

    counted(const counted& other) noexcept : value(other.value) {
        ++constructed;
        ++copied;
    }
    // -1 marks a moved-from object so a test can spot use-after-move.
    counted(counted&& other) noexcept : value(other.value) {
        other.value = -1;
        ++constructed;
        ++moved;
    }

    counted& operator=(const counted& other) noexcept {
        value = other.value;
        ++copied;
        return *this;
    }
    counted& operator=(counted&& other) noexcept {
        if (this != &other) {
            value = other.value;
            other.value = -1;
        }
        ++moved;
        return *this;
    }

    ~counted() { ++destroyed; }

    // Instances currently alive; 0 after a test means nothing leaked.
    static long live() noexcept { return constructed.load() - destroyed.load(); }

    static void reset() noexcept {
        constructed = 0;
        copied = 0;
        moved = 0;
        destroyed = 0;
    }

    friend bool operator==(const counted& a, const counted& b) noexcept {
        return a.value == b.value;
    }
};

// Move-only value whose moves can be made to throw on demand, for testing the
// library's exception safety. Set throw_after = k: the next k moves succeed
// and the (k+1)-th throws std::runtime_error("throwing_move"); the throw is
// one-shot (throw_after becomes -1 again). -1 means never throw.
// A throwing move leaves both objects untouched.
// Thread-safe (counters); each instance is Not thread-safe.
struct throwing_move {
    int value = 0;

    inline static std::atomic<int> throw_after{-1};
    inline static std::atomic<long> constructed{0};
    inline static std::atomic<long> destroyed{0};

    throwing_move() noexcept { ++constructed; }
    explicit throwing_move(int v) noexcept : value(v) { ++constructed; }

    throwing_move(const throwing_move&) = delete;
    throwing_move& operator=(const throwing_move&) = delete;

    throwing_move(throwing_move&& other) : value(other.value) {
        // Counted only once construction succeeds: a throwing constructor
        // never produced an object, so no destructor will run for it.
        maybe_throw();
        other.value = -1;
        ++constructed;
    }
    throwing_move& operator=(throwing_move&& other) {
        maybe_throw();
        if (this != &other) {
            value = other.value;
            other.value = -1;
        }
        return *this;
    }

    ~throwing_move() { ++destroyed; }

    static long live() noexcept { return constructed.load() - destroyed.load(); }

    static void reset() noexcept {
        throw_after = -1;
        constructed = 0;
        destroyed = 0;
    }

    friend bool operator==(const throwing_move& a, const throwing_move& b) noexcept {
        return a.value == b.value;
    }

  private:
    // Decrements the budget with a CAS loop so concurrent moves each consume
    // exactly one step and exactly one of them throws.
    static void maybe_throw() {
        int n = throw_after.load();
        while (n >= 0) {
            if (n == 0) {
                if (throw_after.compare_exchange_weak(n, -1)) {
                    throw std::runtime_error("throwing_move");
                }
            } else if (throw_after.compare_exchange_weak(n, n - 1)) {
                return;
            }
        }
    }
};

// Where each value ended: received, handed back to its producer, or destroyed by the channel
// (the last receiver left). Exactly one of the three, exactly once, for every value created.
// Thread-safe (atomic counters); read it only after all threads are joined.
struct ledger {
    explicit ledger(std::size_t n) : created(n), received(n), returned(n), dropped(n) {}
    std::vector<std::atomic<int>> created, received, returned, dropped;
};

// A payload that reports its own destruction while it still carries a value. Move-only.
// Not thread-safe (each instance); its ledger is.
class tracked {
  public:
    tracked(ledger& l, std::uint64_t id) : ledger_(&l), id_(id) { l.created[id].fetch_add(1); }
    tracked(tracked&& o) noexcept : ledger_(std::exchange(o.ledger_, nullptr)), id_(o.id_) {}
    tracked& operator=(tracked&&) = delete;
    ~tracked() {
        if (ledger_ != nullptr) ledger_->dropped[id_].fetch_add(1);
    }
    std::uint64_t id() const { return id_; }
    /// The holder accounts for the value; it no longer counts as dropped.
    void settle(std::vector<std::atomic<int>> ledger::*where) {
        (ledger_->*where)[id_].fetch_add(1);
        ledger_ = nullptr;
    }

  private:
    ledger* ledger_;
    std::uint64_t id_;
};

/// What happened to the handlers of a test: how many are alive and how many were invoked.
/// Thread-safe.
struct handler_counts {
    std::atomic<int> alive{0};
    std::atomic<int> invoked{0};
};

/// A move-only completion handler that counts itself in `handler_counts` (a moved-from one does
/// not count). Not thread-safe (each instance); its counts are.
struct counted_handler {
    explicit counted_handler(handler_counts* c) noexcept : counts(c) { ++counts->alive; }
    counted_handler(counted_handler&& other) noexcept
        : counts(std::exchange(other.counts, nullptr)) {}
    counted_handler(const counted_handler&) = delete;
    counted_handler& operator=(const counted_handler&) = delete;
    counted_handler& operator=(counted_handler&&) = delete;
    ~counted_handler() {
        if (counts != nullptr) --counts->alive;
    }
    template <class Result> void operator()(Result&&) { ++counts->invoked; }

    handler_counts* counts;
};

} // namespace cochan_test
