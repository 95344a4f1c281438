// Model-based fuzzing of cochan's channels: the input bytes decode into a sequence of operations
// on one channel, and every observable effect of each operation is compared with a plain
// reference model (a std::deque, counters and FIFO lists of waiting operations, written from
// docs/design.md's transition table):
//
// - the result of each operation (which value, which error, whether it waited);
// - which waiting operations each operation completed, and in which order (one transition
//   notifies one waiter; a disconnection notifies all, oldest first);
// - `size()` after each operation;
// - which values are alive after each operation: the model knows where every value is (the
//   buffer, a grant, a waiting send, the caller), so a value lost, duplicated, destroyed early
//   or kept too long is a mismatch; at the end `counted::live() == 0`.
//
// Input format: byte 0 picks the channel (bit 0: MPMC, (byte >> 1) % 5: capacity 1..4, or 0 for
// unbounded). Then two bytes per operation: an opcode and an argument (see `step()`).
// Single-threaded: waiting operations are coroutines resumed through `.resume_on()` of a
// scheduler the input drives (which posted coroutine runs next is an operation too).
//
// Built two ways (tests/fuzz/CMakeLists.txt): with clang's libFuzzer, and as a plain driver
// (COCHAN_FUZZ_REPLAY_MAIN) that runs each file or directory given, so any compiler can replay
// the corpus. A mismatch prints what differed and aborts. COCHAN_FUZZ_VERBOSE=1 prints every
// decoded operation.
#include <cochan/cochan.hpp>

#include "support/channels.hpp"
#include "support/counted.hpp"
#include "support/task.hpp"

#include <algorithm>
#include <array>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#ifdef COCHAN_FUZZ_REPLAY_MAIN
#include <filesystem>
#include <fstream>
#include <iterator>
#endif

namespace {

using cochan_test::counted;
using cochan_test::task;

bool g_verbose = false;

[[noreturn]] void mismatch(const std::string& what) {
    std::fprintf(stderr, "cochan fuzz: mismatch with the model: %s\n", what.c_str());
    std::fflush(stderr);
    std::abort();
}

void note(const std::string& what) {
    if (g_verbose) std::printf("  %s\n", what.c_str());
}

// ---- values -------------------------------------------------------------------------------------

/// How many live objects carry each value id (a moved-from object carries none). The model
/// predicts exactly which ids are alive after every operation.
std::vector<int> g_live;

/// A value: a `counted` (leaks show in counted::live()) and an id. 256 bytes, so an unbounded
/// channel's segments hold 8 values and inputs cross segment boundaries often.
class payload {
  public:
    explicit payload(int id) : c_(id), id_(id) {
        if (static_cast<std::size_t>(id) >= g_live.size())
            g_live.resize(static_cast<std::size_t>(id) + 1);
        ++g_live[static_cast<std::size_t>(id)];
    }
    payload(payload&& other) noexcept
        : c_(std::move(other.c_)), id_(std::exchange(other.id_, -1)) {}
    payload& operator=(payload&&) = delete;
    ~payload() {
        if (id_ >= 0) --g_live[static_cast<std::size_t>(id_)];
    }
    int id() const noexcept { return id_; }
    bool intact() const noexcept { return id_ >= 0 && c_.value == id_ && pad_[0] == 0; }

  private:
    counted c_;
    int id_;
    std::array<unsigned char, 256 - sizeof(counted) - sizeof(int)> pad_{};
};

// ---- the scheduler the input drives ---------------------------------------------------------

/// Posted coroutines wait here until the input runs one of them, any one, not only the oldest
/// (support/manual_scheduler.hpp is FIFO). Records the order of posts for the notification
/// check.
class picking_scheduler {
  public:
    struct poster {
        picking_scheduler* s;
        void operator()(std::coroutine_handle<> h) const {
            s->ready_.push_back(h);
            s->log_.push_back(h);
        }
    };
    poster executor() noexcept { return {this}; }

    std::size_t size() const noexcept { return ready_.size(); }
    std::coroutine_handle<> at(std::size_t i) const noexcept { return ready_[i]; }
    void remove(std::coroutine_handle<> h) { std::erase(ready_, h); }
    std::vector<std::coroutine_handle<>> take_log() { return std::exchange(log_, {}); }

  private:
    std::vector<std::coroutine_handle<>> ready_;
    std::vector<std::coroutine_handle<>> log_;
};

template <class Rx>
task<cochan::recv_result<payload>> recv_op(Rx& rx, std::stop_token token, picking_scheduler& s) {
    co_return co_await rx.recv(std::move(token)).resume_on(s.executor());
}

template <class Tx>
task<cochan::send_result<payload>> send_op(Tx& tx, payload v, std::stop_token token,
                                           picking_scheduler& s) {
    co_return co_await tx.send(std::move(v), std::move(token)).resume_on(s.executor());
}

// ---- the model ------------------------------------------------------------------------------

enum class op_kind : std::uint8_t { send, recv };
enum class op_state : std::uint8_t {
    waiting,   // linked in a waiter list
    completed, // completed and notified, not yet resumed
    finished,  // resumed and checked, or its coroutine destroyed
};
enum class outcome : std::uint8_t { ok, granted, cancelled, disconnected };

const char* name(outcome o) {
    switch (o) {
    case outcome::ok: return "ok";
    case outcome::granted: return "granted";
    case outcome::cancelled: return "cancelled";
    case outcome::disconnected: return "disconnected";
    }
    return "?";
}

/// An awaitable operation: the model's view of it and the coroutine that runs it.
struct op_record {
    op_kind kind = op_kind::recv;
    int endpoint = 0;
    int value = -1; // send: the value it offers; recv: the value granted to it
    op_state state = op_state::waiting;
    outcome result = outcome::ok;
    std::optional<std::stop_source> stop;
    task<cochan::recv_result<payload>> recv_task;
    task<cochan::send_result<payload>> send_task;

    std::coroutine_handle<> handle() const {
        return kind == op_kind::recv ? recv_task.handle() : send_task.handle();
    }
    bool pending() const noexcept { return state != op_state::finished; }
};

/// The reference: what docs/design.md says the channel does, with none of its machinery.
class model {
  public:
    model(bool bounded, std::size_t capacity) : bounded_(bounded), capacity_(capacity) {}

    std::deque<int> buffer;
    std::size_t outstanding = 0;  // bounded: values granted to receivers that have not taken them
    std::deque<int> recv_waiters; // op indices, oldest first
    std::deque<int> send_waiters;
    int senders = 1;
    int receivers = 1;
    bool closed = false; // a receiver closed the channel for sending
    std::vector<op_record>* ops = nullptr;
    std::vector<int> completed; // ops completed by the current action, in notification order

    bool slot_free() const noexcept { return !bounded_ || buffer.size() + outstanding < capacity_; }
    bool sends_refused() const noexcept { return receivers == 0 || closed; }
    bool receiving_ends() const noexcept { return senders == 0 || closed; }

    /// rx.close(): every waiting send, then every waiting receive, completes disconnected.
    void close() {
        if (closed) return;
        closed = true;
        while (!send_waiters.empty()) {
            const int s = send_waiters.front();
            send_waiters.pop_front();
            complete(s, outcome::disconnected);
        }
        while (!recv_waiters.empty()) {
            const int r = recv_waiters.front();
            recv_waiters.pop_front();
            complete(r, outcome::disconnected);
        }
    }

    void complete(int i, outcome o) {
        auto& op = (*ops)[static_cast<std::size_t>(i)];
        op.state = op_state::completed;
        op.result = o;
        completed.push_back(i);
    }

    /// A value arrives: granted to the oldest waiting receive, else appended.
    void deliver(int v) {
        if (!recv_waiters.empty()) {
            grant(v);
        } else {
            buffer.push_back(v);
        }
    }
    /// A handed-back value: it is older than everything buffered.
    void deliver_front(int v) {
        if (!recv_waiters.empty()) {
            grant(v);
        } else {
            buffer.push_front(v);
        }
    }
    void grant(int v) {
        const int r = recv_waiters.front();
        recv_waiters.pop_front();
        (*ops)[static_cast<std::size_t>(r)].value = v;
        if (bounded_) ++outstanding;
        complete(r, outcome::granted);
    }
    /// A slot freed: the oldest waiting sends move in while slots are free.
    void admit() {
        while (!send_waiters.empty() && slot_free()) {
            const int s = send_waiters.front();
            send_waiters.pop_front();
            deliver((*ops)[static_cast<std::size_t>(s)].value);
            complete(s, outcome::ok);
        }
    }
    int take_front() {
        const int v = buffer.front();
        buffer.pop_front();
        if (bounded_) admit();
        return v;
    }

    /// The last sender left: every waiting receive (oldest first), then every waiting send
    /// (one whose own sender was closed under it) completes with disconnected.
    void sender_left() {
        if (--senders != 0) return;
        while (!recv_waiters.empty()) {
            const int r = recv_waiters.front();
            recv_waiters.pop_front();
            complete(r, outcome::disconnected);
        }
        while (!send_waiters.empty()) {
            const int s = send_waiters.front();
            send_waiters.pop_front();
            complete(s, outcome::disconnected);
        }
    }
    /// The last receiver left: every waiting send completes with disconnected and the buffer is
    /// destroyed.
    void receiver_left() {
        if (--receivers != 0) return;
        while (!send_waiters.empty()) {
            const int s = send_waiters.front();
            send_waiters.pop_front();
            complete(s, outcome::disconnected);
        }
        buffer.clear();
    }

    void unlink(int i) {
        std::erase(recv_waiters, i);
        std::erase(send_waiters, i);
    }

    /// The invariants the design states; a failure here is a bug in the model.
    void check_invariants() const {
        if (!recv_waiters.empty() && !buffer.empty()) mismatch("model: receivers wait on a value");
        if (!send_waiters.empty() && slot_free()) mismatch("model: senders wait on a free slot");
    }

  private:
    bool bounded_;
    std::size_t capacity_;
};

// ---- the harness ----------------------------------------------------------------------------

constexpr std::size_t max_endpoints = 4;

/// One input against one channel of kind `Kind` (support/channels.hpp).
template <class Kind> class harness {
    static constexpr bool bounded = Kind::bounded;
    static constexpr bool multi = Kind::multi;
    using channel = decltype(Kind::make(1));
    using sender = typename channel::first_type;
    using receiver = typename channel::second_type;

  public:
    explicit harness(std::size_t capacity) : model_(bounded, capacity) {
        auto ch = Kind::make(capacity);
        // The harness's own reference to the queue (not an endpoint) keeps size() readable after
        // every endpoint is gone.
        source_ = make_op_source(ch.second);
        core_ = source_.queue.get();
        tx_[0].emplace(std::move(ch.first));
        rx_[0].emplace(std::move(ch.second));
        ops_.reserve(512);
        model_.ops = &ops_;
    }
    harness(const harness&) = delete;
    harness& operator=(const harness&) = delete;
    ~harness() = default; // source_ (declared before the endpoints) lets go of the queue last

    void run(const std::uint8_t* data, std::size_t size) {
        for (std::size_t i = 0; i + 1 < size; i += 2) {
            step(data[i], data[i + 1]);
            check_state();
        }
        finish();
    }

  private:
    // ---- decoding ------------------------------------------------------------------------

    void step(std::uint8_t opcode, std::uint8_t arg) {
        switch (opcode % 16) {
        case 0:
        case 1: try_send(arg); break;
        case 2:
        case 3: send_awaitable(arg); break;
        case 4:
        case 5: recv_awaitable(arg); break;
        case 6: (arg & 0x80) != 0 ? try_recv_many(arg) : try_recv(arg); break;
        case 7:
        case 8:
        case 9: run_posted(arg); break;
        case 10: stop(arg); break;
        case 11: destroy(arg); break;
        case 12: close_sender(arg); break;
        case 13: drop_sender(arg); break;
        case 14: (arg & 0x80) != 0 ? close_receiver(arg) : drop_receiver(arg); break;
        default: clone(arg); break;
        }
    }

    /// The `n`-th live endpoint, counting from `arg`; -1 if none.
    template <class E>
    static int pick(const std::array<std::optional<E>, max_endpoints>& e, std::uint8_t arg) {
        for (std::size_t k = 0; k < max_endpoints; ++k) {
            const std::size_t i = (arg + k) % max_endpoints;
            if (e[i]) return static_cast<int>(i);
        }
        return -1;
    }

    bool has_pending_op(op_kind kind, int endpoint) const {
        return std::any_of(ops_.begin(), ops_.end(), [&](const op_record& op) {
            return op.pending() && op.kind == kind && op.endpoint == endpoint;
        });
    }

    /// SPMC: sends on the one sender must not overlap (the library asserts).
    bool producer_busy() const { return !multi && has_pending_op(op_kind::send, 0); }

    std::stop_token token_for(op_record& op, std::uint8_t mode) {
        switch (mode % 4) {
        case 1: op.stop.emplace(); return op.stop->get_token();
        case 2: {
            std::stop_source s;
            s.request_stop(); // already stopped: cancels at once, touching nothing
            return s.get_token();
        }
        default: return {};
        }
    }

    // ---- operations -------------------------------------------------------------------------

    void try_send(std::uint8_t arg) {
        const int k = pick(tx_, arg);
        if (k < 0 || producer_busy()) return;
        const int v = next_value_++;
        note("try_send tx" + std::to_string(k) + " v" + std::to_string(v));
        // Predicted result.
        outcome expected = outcome::ok;
        bool full = false;
        if (tx_closed_[static_cast<std::size_t>(k)] || model_.sends_refused()) {
            expected = outcome::disconnected;
        } else if (!model_.slot_free()) {
            full = true;
        } else {
            model_.deliver(v);
        }
        std::optional<cochan::send_result<payload>> r;
        auto& tx = *tx_[static_cast<std::size_t>(k)];
        if constexpr (bounded) {
            r.emplace(tx.try_send(payload(v)));
        } else {
            r.emplace(tx.send(payload(v)));
        }
        if (full || expected != outcome::ok) {
            if (*r)
                mismatch("try_send succeeded; the model says " +
                         std::string(full ? "full" : "disconnected"));
            const auto want = full ? cochan::send_errc::full : cochan::send_errc::disconnected;
            if (r->error().reason != want) mismatch("try_send failed for the wrong reason");
            if (r->error().value.id() != v || !r->error().value.intact()) {
                mismatch("try_send handed back another value");
            }
        } else if (!*r) {
            mismatch("try_send failed; the model says it succeeds");
        }
        check_notified();
    }

    void send_awaitable(std::uint8_t arg) {
        if constexpr (!bounded) {
            try_send(arg); // unbounded: send never waits
        } else {
            const int k = pick(tx_, arg);
            if (k < 0 || producer_busy()) return;
            const int v = next_value_++;
            const int i = new_op(op_kind::send, k);
            auto& op = ops_[static_cast<std::size_t>(i)];
            op.value = v;
            std::stop_token token = token_for(op, arg >> 4);
            note("send tx" + std::to_string(k) + " v" + std::to_string(v) + " as op" +
                 std::to_string(i) + (token.stop_requested() ? " (stopped token)" : ""));
            // Predicted: the checks of send_awaitable::await_suspend and send_or_wait, in order
            // (two checks give the same outcome for different reasons: kept apart to mirror them).
            bool waits = false;
            // NOLINTNEXTLINE(bugprone-branch-clone)
            if (tx_closed_[static_cast<std::size_t>(k)]) {
                op.result = outcome::disconnected;
            } else if (token.stop_requested()) {
                op.result = outcome::cancelled;
            } else if (model_.sends_refused()) {
                op.result = outcome::disconnected;
            } else if (model_.slot_free() && model_.send_waiters.empty()) {
                model_.deliver(v);
                op.result = outcome::ok;
            } else {
                model_.send_waiters.push_back(i);
                waits = true;
            }
            auto& sched = sched_;
            op.send_task = send_op(*tx_[static_cast<std::size_t>(k)], payload(v), token, sched);
            started(i, waits);
        }
    }

    void recv_awaitable(std::uint8_t arg) {
        const int k = pick(rx_, arg);
        if (k < 0) return;
        const int i = new_op(op_kind::recv, k);
        auto& op = ops_[static_cast<std::size_t>(i)];
        std::stop_token token = token_for(op, arg >> 4);
        note("recv rx" + std::to_string(k) + " as op" + std::to_string(i) +
             (token.stop_requested() ? " (stopped token)" : ""));
        bool waits = false;
        if (token.stop_requested()) {
            op.result = outcome::cancelled;
        } else if (!model_.buffer.empty()) {
            op.value = model_.take_front();
            op.result = outcome::ok;
        } else if (model_.receiving_ends()) {
            op.result = outcome::disconnected;
        } else {
            model_.recv_waiters.push_back(i);
            waits = true;
        }
        op.recv_task = recv_op(*rx_[static_cast<std::size_t>(k)], token, sched_);
        started(i, waits);
    }

    void try_recv(std::uint8_t arg) {
        const int k = pick(rx_, arg);
        if (k < 0) return;
        note("try_recv rx" + std::to_string(k));
        std::optional<int> expected;
        cochan::recv_errc error = cochan::recv_errc::empty;
        if (!model_.buffer.empty()) {
            expected = model_.take_front();
        } else if (model_.receiving_ends()) {
            error = cochan::recv_errc::disconnected;
        }
        auto r = rx_[static_cast<std::size_t>(k)]->try_recv();
        if (expected) {
            if (!r) mismatch("try_recv failed; the model has v" + std::to_string(*expected));
            if (r->id() != *expected || !r->intact()) {
                mismatch("try_recv got v" + std::to_string(r->id()) + "; the model says v" +
                         std::to_string(*expected));
            }
        } else {
            if (r) mismatch("try_recv got v" + std::to_string(r->id()) + "; the model has none");
            if (r.error() != error) mismatch("try_recv failed for the wrong reason");
        }
        check_notified();
    }

    /// try_recv_many(out, 1 + (arg >> 4) % 8): takes up to max values in one lock section, each
    /// freed slot admitting waiting sends (whose values may join the batch).
    void try_recv_many(std::uint8_t arg) {
        const int k = pick(rx_, arg);
        if (k < 0) return;
        const std::size_t max = 1 + (arg >> 4) % 8;
        note("try_recv_many rx" + std::to_string(k) + " max " + std::to_string(max));
        std::vector<int> expected;
        while (expected.size() < max && !model_.buffer.empty()) {
            expected.push_back(model_.take_front());
        }
        std::vector<payload> out;
        auto r = rx_[static_cast<std::size_t>(k)]->try_recv_many(out, max);
        if (expected.empty()) {
            if (r) mismatch("try_recv_many took values; the model has none");
            const auto error = model_.receiving_ends() ? cochan::recv_errc::disconnected
                                                       : cochan::recv_errc::empty;
            if (r.error() != error) mismatch("try_recv_many failed for the wrong reason");
        } else {
            if (!r || *r != expected.size() || out.size() != expected.size()) {
                mismatch("try_recv_many took " + std::to_string(out.size()) +
                         " values; the model says " + std::to_string(expected.size()));
            }
            for (std::size_t j = 0; j < out.size(); ++j) {
                if (out[j].id() != expected[j] || !out[j].intact()) {
                    mismatch("try_recv_many value " + std::to_string(j) + " is v" +
                             std::to_string(out[j].id()) + "; the model says v" +
                             std::to_string(expected[j]));
                }
            }
        }
        check_notified();
    }

    /// rx.close(): closes the channel for sending.
    void close_receiver(std::uint8_t arg) {
        const int k = pick(rx_, arg);
        if (k < 0) return;
        note("close rx" + std::to_string(k));
        model_.close();
        rx_[static_cast<std::size_t>(k)]->close();
        check_notified();
    }

    /// Resumes one posted coroutine: its operation returns what the model completed it with.
    void run_posted(std::uint8_t arg) {
        if (sched_.size() == 0) return;
        const auto h = sched_.at(arg % sched_.size());
        const int i = op_of(h);
        auto& op = ops_[static_cast<std::size_t>(i)];
        note("run op" + std::to_string(i));
        if (op.state != op_state::completed)
            mismatch("op" + std::to_string(i) + " was posted but is not complete");
        sched_.remove(h);
        // A granted receive frees its slot as it takes the value (bounded).
        if (op.kind == op_kind::recv && op.result == outcome::granted && bounded) {
            --model_.outstanding;
            model_.admit();
        }
        h.resume();
        if (!(op.kind == op_kind::recv ? op.recv_task.done() : op.send_task.done())) {
            mismatch("op" + std::to_string(i) + " did not finish when resumed");
        }
        check_result(i);
        check_notified();
    }

    void stop(std::uint8_t arg) {
        std::vector<int> candidates;
        for (std::size_t i = 0; i < ops_.size(); ++i) {
            if (ops_[i].pending() && ops_[i].stop && !ops_[i].stop->stop_requested()) {
                candidates.push_back(static_cast<int>(i));
            }
        }
        if (candidates.empty()) return;
        const int i = candidates[arg % candidates.size()];
        auto& op = ops_[static_cast<std::size_t>(i)];
        note("stop op" + std::to_string(i));
        if (op.state == op_state::waiting) { // a stop after the grant changes nothing
            model_.unlink(i);
            model_.complete(i, outcome::cancelled);
        }
        op.stop->request_stop();
        check_notified();
    }

    /// Destroys a suspended operation's coroutine (waiting, or completed and not yet resumed).
    void destroy(std::uint8_t arg) {
        std::vector<int> candidates;
        for (std::size_t i = 0; i < ops_.size(); ++i) {
            if (ops_[i].pending()) candidates.push_back(static_cast<int>(i));
        }
        if (candidates.empty()) return;
        const int i = candidates[arg % candidates.size()];
        auto& op = ops_[static_cast<std::size_t>(i)];
        note("destroy op" + std::to_string(i));
        if (op.state == op_state::waiting) {
            model_.unlink(i); // unlinked; nothing else happens
        } else if (op.kind == op_kind::recv && op.result == outcome::granted) {
            // The grant goes back: to the next waiting receive, else the head of the buffer.
            if (bounded) --model_.outstanding;
            if (model_.receivers != 0 && model_.slot_free()) model_.deliver_front(op.value);
            if (bounded) model_.admit();
        }
        op.state = op_state::finished;
        sched_.remove(op.handle());
        if (op.kind == op_kind::recv) {
            op.recv_task.reset();
        } else {
            op.send_task.reset();
        }
        check_notified();
    }

    void close_sender(std::uint8_t arg) {
        const int k = pick(tx_, arg);
        if (k < 0) return;
        note("close tx" + std::to_string(k));
        if (!tx_closed_[static_cast<std::size_t>(k)]) {
            tx_closed_[static_cast<std::size_t>(k)] = true;
            model_.sender_left();
        }
        tx_[static_cast<std::size_t>(k)]->close();
        check_notified();
    }

    /// Drops an endpoint with no operation in flight (an endpoint must outlive its operations).
    void drop_sender(std::uint8_t arg) {
        const int k = pick(tx_, arg);
        if (k < 0 || has_pending_op(op_kind::send, k)) return;
        note("drop tx" + std::to_string(k));
        if (!tx_closed_[static_cast<std::size_t>(k)]) model_.sender_left();
        tx_closed_[static_cast<std::size_t>(k)] = false;
        tx_[static_cast<std::size_t>(k)].reset();
        check_notified();
    }

    void drop_receiver(std::uint8_t arg) {
        const int k = pick(rx_, arg);
        if (k < 0 || has_pending_op(op_kind::recv, k)) return;
        note("drop rx" + std::to_string(k));
        model_.receiver_left();
        rx_[static_cast<std::size_t>(k)].reset();
        check_notified();
    }

    /// Clones a receiver (even bit) or, MPMC, a sender (odd bit) into a free slot.
    void clone(std::uint8_t arg) {
        if (multi && (arg & 1) != 0) {
            if constexpr (multi) {
                const int from = pick(tx_, arg >> 1);
                const auto to = std::find(tx_.begin(), tx_.end(), std::nullopt) - tx_.begin();
                if (from < 0 || to == static_cast<std::ptrdiff_t>(max_endpoints)) return;
                note("clone tx" + std::to_string(from) + " as tx" + std::to_string(to));
                tx_[static_cast<std::size_t>(to)].emplace(*tx_[static_cast<std::size_t>(from)]);
                // A clone of a closed sender is closed too, and does not count.
                tx_closed_[static_cast<std::size_t>(to)] =
                    tx_closed_[static_cast<std::size_t>(from)];
                if (!tx_closed_[static_cast<std::size_t>(to)]) ++model_.senders;
            }
        } else {
            const int from = pick(rx_, arg >> 1);
            const auto to = std::find(rx_.begin(), rx_.end(), std::nullopt) - rx_.begin();
            if (from < 0 || to == static_cast<std::ptrdiff_t>(max_endpoints)) return;
            note("clone rx" + std::to_string(from) + " as rx" + std::to_string(to));
            rx_[static_cast<std::size_t>(to)].emplace(*rx_[static_cast<std::size_t>(from)]);
            ++model_.receivers;
        }
        check_notified();
    }

    /// The end of the input: run what is posted, disconnect the senders and run the woken,
    /// destroy what still waits, drop everything; then nothing may be left alive.
    void finish() {
        note("finish");
        while (sched_.size() != 0) {
            run_posted(0);
            check_state();
        }
        for (std::size_t k = 0; k < max_endpoints; ++k) {
            if (tx_[k] && !tx_closed_[k]) {
                close_sender(static_cast<std::uint8_t>(k));
                check_state();
            }
        }
        while (sched_.size() != 0) {
            run_posted(0);
            check_state();
        }
        while (std::any_of(ops_.begin(), ops_.end(),
                           [](const op_record& op) { return op.pending(); })) {
            destroy(0);
            check_state();
        }
        for (auto& tx : tx_) tx.reset();
        for (std::size_t k = 0; k < max_endpoints; ++k) {
            if (rx_[k]) {
                drop_receiver(static_cast<std::uint8_t>(k));
                check_state();
            }
        }
        if (core_->size() != 0) mismatch("values remain buffered after the last receiver left");
        for (std::size_t id = 0; id < g_live.size(); ++id) {
            if (g_live[id] != 0) mismatch("v" + std::to_string(id) + " is still alive at the end");
        }
        ops_.clear();
        if (counted::live() != 0) mismatch("counted::live() is not 0 at the end");
    }

    // ---- checks ------------------------------------------------------------------------------

    int new_op(op_kind kind, int endpoint) {
        ops_.emplace_back();
        ops_.back().kind = kind;
        ops_.back().endpoint = endpoint;
        return static_cast<int>(ops_.size()) - 1;
    }

    int op_of(std::coroutine_handle<> h) const {
        for (std::size_t i = 0; i < ops_.size(); ++i) {
            if (ops_[i].pending() && ops_[i].handle() == h) return static_cast<int>(i);
        }
        mismatch("a coroutine that belongs to no pending operation was posted");
    }

    /// After starting op `i`: it waits exactly when the model says so; if it completed at once,
    /// its result is the model's.
    void started(int i, bool waits) {
        auto& op = ops_[static_cast<std::size_t>(i)];
        const bool done = op.kind == op_kind::recv ? op.recv_task.done() : op.send_task.done();
        if (done == waits) {
            mismatch("op" + std::to_string(i) +
                     (waits ? " completed at once; the model says it waits"
                            : " waits; the model says it completes"));
        }
        if (done) {
            op.state = op_state::completed;
            check_result(i);
        } else {
            note("  op" + std::to_string(i) + " waits");
        }
        check_notified();
    }

    /// A finished operation returned what the model completed it with; then it is discarded.
    void check_result(int i) {
        auto& op = ops_[static_cast<std::size_t>(i)];
        const std::string who = "op" + std::to_string(i);
        if (g_verbose) {
            note("  " + who + " -> " + name(op.result) +
                 (op.value >= 0 ? " v" + std::to_string(op.value) : std::string()));
        }
        if (op.kind == op_kind::recv) {
            auto& r = op.recv_task.result();
            if (op.result == outcome::ok || op.result == outcome::granted) {
                if (!r)
                    mismatch(who + " (recv) failed; the model gives it v" +
                             std::to_string(op.value));
                if (r->id() != op.value || !r->intact()) {
                    mismatch(who + " (recv) got v" + std::to_string(r->id()) +
                             "; the model says v" + std::to_string(op.value));
                }
            } else {
                const auto want = op.result == outcome::cancelled ? cochan::recv_errc::cancelled
                                                                  : cochan::recv_errc::disconnected;
                if (r)
                    mismatch(who + " (recv) got v" + std::to_string(r->id()) + "; the model says " +
                             name(op.result));
                if (r.error() != want)
                    mismatch(who + " (recv) failed for the wrong reason; the model says " +
                             name(op.result));
            }
            op.recv_task.reset();
        } else {
            auto& r = op.send_task.result();
            if (op.result == outcome::ok) {
                if (!r) mismatch(who + " (send) failed; the model says it succeeded");
            } else {
                const auto want = op.result == outcome::cancelled ? cochan::send_errc::cancelled
                                                                  : cochan::send_errc::disconnected;
                if (r) mismatch(who + " (send) succeeded; the model says " + name(op.result));
                if (r.error().reason != want)
                    mismatch(who + " (send) failed for the wrong reason; the model says " +
                             name(op.result));
                if (r.error().value.id() != op.value || !r.error().value.intact()) {
                    mismatch(who + " (send) handed back another value");
                }
            }
            op.send_task.reset();
        }
        op.state = op_state::finished;
    }

    /// The coroutines posted by the last operation are exactly those the model completed, in
    /// the same order.
    void check_notified() {
        const auto log = sched_.take_log();
        // Operations the model completed through a wait; those that completed at once are never
        // in this list (started() checks them).
        const auto posted_expected = std::exchange(model_.completed, {});
        std::vector<int> posted;
        posted.reserve(log.size());
        for (auto h : log) posted.push_back(op_of(h));
        if (posted != posted_expected) {
            std::string s = "notified ops {";
            for (int i : posted) s += " " + std::to_string(i);
            s += " }; the model completed {";
            for (int i : posted_expected) s += " " + std::to_string(i);
            mismatch(s + " }");
        }
    }

    /// After every operation: size(), and exactly the values the model holds are alive.
    void check_state() {
        model_.check_invariants();
        const std::size_t size = core_->size();
        if (size != model_.buffer.size()) {
            mismatch("size() is " + std::to_string(size) + "; the model buffers " +
                     std::to_string(model_.buffer.size()));
        }
        std::vector<int> expected(static_cast<std::size_t>(next_value_), 0);
        for (int v : model_.buffer) ++expected[static_cast<std::size_t>(v)];
        for (const auto& op : ops_) {
            if (!op.pending() || op.value < 0) continue;
            // NOLINTNEXTLINE(bugprone-branch-clone): two reasons a value is still out there
            if (op.kind == op_kind::recv && op.state == op_state::completed) {
                ++expected[static_cast<std::size_t>(op.value)]; // granted, not yet taken
            } else if (op.kind == op_kind::send &&
                       (op.state == op_state::waiting || op.result != outcome::ok)) {
                ++expected[static_cast<std::size_t>(op.value)]; // still the sender's
            }
        }
        if (g_live.size() < expected.size()) g_live.resize(expected.size());
        for (std::size_t id = 0; id < expected.size(); ++id) {
            if (g_live[id] != expected[id]) {
                mismatch("v" + std::to_string(id) + " has " + std::to_string(g_live[id]) +
                         " live object(s); the model says " + std::to_string(expected[id]));
            }
        }
    }

    using source_type = decltype(make_op_source(std::declval<const receiver&>()));
    using core_type = std::remove_pointer_t<decltype(std::declval<source_type&>().queue.get())>;

    model model_;
    picking_scheduler sched_;
    source_type source_;
    core_type* core_ = nullptr;
    std::array<std::optional<sender>, max_endpoints> tx_;
    std::array<bool, max_endpoints> tx_closed_{};
    std::array<std::optional<receiver>, max_endpoints> rx_;
    std::vector<op_record> ops_;
    int next_value_ = 0;
};

template <class Kind>
void run_kind(std::size_t capacity, const std::uint8_t* data, std::size_t size) {
    harness<Kind> h(capacity);
    h.run(data, size);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    counted::reset();
    g_live.clear();
    const bool multi = (data[0] & 1) != 0;
    const std::size_t capacity = (data[0] >> 1) % 5; // 0: unbounded
    if (g_verbose) {
        std::printf("%s %s(%zu)\n", multi ? "mpmc" : "spmc",
                    capacity == 0 ? "unbounded" : "bounded", capacity);
    }
    using namespace cochan_test;
    if (capacity == 0) {
        if (multi) {
            run_kind<mpmc_unbounded<payload>>(0, data + 1, size - 1);
        } else {
            run_kind<spmc_unbounded<payload>>(0, data + 1, size - 1);
        }
    } else if (multi) {
        run_kind<mpmc_bounded<payload>>(capacity, data + 1, size - 1);
    } else {
        run_kind<spmc_bounded<payload>>(capacity, data + 1, size - 1);
    }
    return 0;
}

#ifdef COCHAN_FUZZ_REPLAY_MAIN
// The plain driver: runs every file given, and every file in every directory given.
int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    g_verbose = std::getenv("COCHAN_FUZZ_VERBOSE") != nullptr;
    std::vector<fs::path> files;
    for (int i = 1; i < argc; ++i) {
        const fs::path p = argv[i];
        if (fs::is_directory(p)) {
            for (const auto& e : fs::directory_iterator(p)) {
                if (e.is_regular_file()) files.push_back(e.path());
            }
        } else {
            files.push_back(p);
        }
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
        std::fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
        return 2;
    }
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                      std::istreambuf_iterator<char>());
        if (g_verbose) std::printf("== %s\n", f.string().c_str());
        LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    }
    std::printf("cochan fuzz replay: %zu input(s) matched the model\n", files.size());
    return 0;
}
#endif
