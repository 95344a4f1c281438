// Model-based fuzzing of cochan's channels: the input bytes decode into a sequence of operations
// on one channel, and every observable effect of each operation is compared with a plain
// reference model (a std::deque, counters and FIFO lists of waiting operations, written from
// docs/design.md's transition table):
//
// - the result of each operation (which value, which error, whether it waited);
// - which waiting operations each operation completed, and in which order (one transition
//   notifies one waiter; a disconnection notifies all, oldest first);
// - `size()` after each operation;
// - after each operation, the lifecycle queries of every live sender and receiver of both
//   channels (`is_closed()`, `sender_count()`, `receiver_count()`, `size()`, `empty()`,
//   `capacity()` where the kind has one), against
//   the answers docs/reference.md's "Queries" table gives in the model's state: exact, since
//   one thread runs everything;
// - which values are alive after each operation: the model knows where every value is (the
//   buffer, a grant, a waiting send, the caller), so a value lost, duplicated, destroyed early
//   or kept too long is a mismatch; at the end `counted::live() == 0`.
//
// Beside the fuzzed channel ("main") every input has a side channel, MPMC unbounded, that the
// input can send to, receive from and close: `cochan::select` and `try_select` receive from both
// (in either order), so a select's losing branches, a stop of a waiting select and the
// disconnection of one branch are all compared with the model, which links a waiting select in
// both channels' FIFOs and lets a channel complete it only while it is undecided.
//
// Input format: byte 0 picks the main channel (bit 0: MPMC; (byte >> 1) % 6: 0 unbounded,
// 1..4 bounded with that capacity, 5 rendezvous). Then two bytes per operation: an opcode and an
// argument (see `step()`); opcodes 0..15 are the operations on the main channel (their meaning
// predates select and the side channel, so older inputs replay as they did), 16..31 add select,
// try_select and the side channel's operations.
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
#include <string>
#include <utility>
#include <variant>
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
    std::fflush(stdout); // the verbose trace first
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
task<cochan::recv_result<payload>> recv_op(Rx& rx, cochan::default_stop_token token,
                                           picking_scheduler& s) {
    co_return co_await rx.recv(std::move(token)).resume_on(s.executor());
}

using select_result = cochan::recv_result<std::variant<payload, payload>>;

template <class A, class B>
task<select_result> select_op(const A& a, const B& b, cochan::default_stop_token token,
                              picking_scheduler& s) {
    co_return co_await cochan::select(std::move(token), a, b).resume_on(s.executor());
}

template <class Tx>
task<cochan::send_result<payload>> send_op(Tx& tx, payload v, cochan::default_stop_token token,
                                           picking_scheduler& s) {
    co_return co_await tx.send(std::move(v), std::move(token)).resume_on(s.executor());
}

// ---- the model ------------------------------------------------------------------------------

enum class op_kind : std::uint8_t { send, recv, select };
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
    int endpoint = 0; // main channel endpoint (-1: the side channel's)
    int channel = 0;  // send, recv: 0 main, 1 side
    int value = -1;   // send: the value it offers; recv, select: the value granted to it
    op_state state = op_state::waiting;
    outcome result = outcome::ok;
    std::optional<cochan::default_stop_source> stop;
    // select: the main channel is branch 0 (else the side channel is), the channel a value came
    // from, and how many of its branches are linked in a channel that may still deliver.
    bool main_first = true;
    int from = -1;
    int live = 0;
    task<cochan::recv_result<payload>> recv_task;
    task<cochan::send_result<payload>> send_task;
    task<select_result> select_task;

    std::coroutine_handle<> handle() const {
        switch (kind) {
        case op_kind::recv: return recv_task.handle();
        case op_kind::send: return send_task.handle();
        default: return select_task.handle();
        }
    }
    bool task_done() const {
        switch (kind) {
        case op_kind::recv: return recv_task.done();
        case op_kind::send: return send_task.done();
        default: return select_task.done();
        }
    }
    void reset_task() {
        recv_task.reset();
        send_task.reset();
        select_task.reset();
    }
    /// The select's branch index of channel `ch`.
    int branch_of(int ch) const noexcept { return (ch == 0) == main_first ? 0 : 1; }
    bool pending() const noexcept { return state != op_state::finished; }
};

/// The reference: what docs/design.md says the channel does, with none of its machinery. One
/// per channel (`which`: 0 main, 1 side). A waiting select is in the receive FIFO of both; once
/// it is decided (completed), its entry in the other FIFO is a ghost that every transition
/// skips, as the library's claim makes the channel skip a losing branch.
class model {
  public:
    model(bool bounded, std::size_t capacity, int which)
        : bounded_(bounded), capacity_(capacity), which_(which) {}

    std::deque<int> buffer;
    std::deque<int> given_back;   // rendezvous: values handed back, taken before any sender's
    std::size_t outstanding = 0;  // bounded: values granted to receivers that have not taken them
    std::deque<int> recv_waiters; // op indices, oldest first
    std::deque<int> send_waiters;
    int senders = 1;
    int receivers = 1;
    bool closed = false; // a receiver closed the channel for sending
    std::vector<op_record>* ops = nullptr;
    std::vector<int>* completed = nullptr; // ops completed by the current action, in
                                           // notification order (shared by both channels)

    bool bounded() const noexcept { return bounded_; }
    bool rendezvous() const noexcept { return bounded_ && capacity_ == 0; }
    bool slot_free() const noexcept { return !bounded_ || buffer.size() + outstanding < capacity_; }
    bool sends_refused() const noexcept { return receivers == 0 || closed; }
    bool receiving_ends() const noexcept { return (senders == 0 || closed) && given_back.empty(); }

    op_record& op(int i) const { return (*ops)[static_cast<std::size_t>(i)]; }
    /// A decided select's entry: skipped by every transition.
    bool ghost(int i) const {
        return op(i).kind == op_kind::select && op(i).state != op_state::waiting;
    }
    bool real_receiver_waits() const {
        return std::any_of(recv_waiters.begin(), recv_waiters.end(),
                           [this](int i) { return !ghost(i); });
    }

    /// A receive may take a value now: one is buffered, or (rendezvous) one was handed back or
    /// a sender waits.
    bool ready() const {
        return !buffer.empty() || (rendezvous() && (!given_back.empty() || !send_waiters.empty()));
    }
    /// Takes it: the buffer's head, else a handed-back value, else the oldest waiting send's
    /// (which completes).
    int take_now() {
        if (!buffer.empty()) return take_front();
        if (!given_back.empty()) {
            const int v = given_back.front();
            given_back.pop_front();
            return v;
        }
        const int s = send_waiters.front();
        send_waiters.pop_front();
        complete(s, outcome::ok);
        return op(s).value;
    }

    /// rx.close(): every waiting send, then every waiting receive, completes disconnected.
    void close() {
        if (closed) return;
        closed = true;
        while (!send_waiters.empty()) {
            const int s = send_waiters.front();
            send_waiters.pop_front();
            complete(s, outcome::disconnected);
        }
        end_receivers();
    }

    /// No value will arrive: every waiting receive completes disconnected, except a select that
    /// still has a branch in a channel that may deliver (it only loses this branch).
    void end_receivers() {
        while (!recv_waiters.empty()) {
            const int r = recv_waiters.front();
            recv_waiters.pop_front();
            if (ghost(r)) continue;
            if (op(r).kind == op_kind::select && --op(r).live != 0) continue;
            complete(r, outcome::disconnected);
        }
    }

    /// A granted receiver will not take its value (its coroutine was destroyed): the next
    /// waiting receive, else the head of the buffer (a rendezvous: the values handed back).
    void give_back(int v) {
        if (bounded_) --outstanding;
        if (receivers != 0 && slot_free()) {
            deliver_front(v);
        } else if (rendezvous() && receivers != 0) {
            if (!grant(v)) given_back.push_front(v);
        }
        if (bounded_) admit();
    }

    void complete(int i, outcome o) {
        auto& op = (*ops)[static_cast<std::size_t>(i)];
        op.state = op_state::completed;
        op.result = o;
        completed->push_back(i);
    }

    /// A value arrives: granted to the oldest waiting receive, else appended.
    void deliver(int v) {
        if (!grant(v)) buffer.push_back(v);
    }
    /// A handed-back value: it is older than everything buffered.
    void deliver_front(int v) {
        if (!grant(v)) buffer.push_front(v);
    }
    /// To the oldest waiting receive that can take it (a select's decides it); false if none.
    bool grant(int v) {
        while (!recv_waiters.empty()) {
            const int r = recv_waiters.front();
            recv_waiters.pop_front();
            if (ghost(r)) continue;
            op(r).value = v;
            op(r).from = which_;
            if (bounded_) ++outstanding;
            complete(r, outcome::granted);
            return true;
        }
        return false;
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
        end_receivers();
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
        end_receivers();
        buffer.clear();
        given_back.clear();
    }

    void unlink(int i) {
        std::erase(recv_waiters, i);
        std::erase(send_waiters, i);
    }

    // The lifecycle queries, as docs/reference.md states them (its "Queries" table; for a
    // rendezvous, its "Factories"), from the model's own state.

    /// A sender's `is_closed()`: this endpoint was `close()`d (`closed_itself`; a clone of a
    /// closed sender is closed), a receiver closed the channel, or every receiver is gone.
    bool sender_is_closed(bool closed_itself) const noexcept {
        return closed_itself || closed || receivers == 0;
    }
    /// A receiver's `is_closed()`: every sender is gone (destroyed or closed) or a receiver
    /// closed the channel, even while values are still buffered or, on a rendezvous, a value
    /// given back waits to be received.
    bool receiver_is_closed() const noexcept { return senders == 0 || closed; }
    /// `size()` on any endpoint: the values buffered now, not counting values granted to
    /// waiting receivers; 0 once the last receiver is gone (receiver_left() clears the buffer).
    /// Always 0 on a rendezvous: a value given back waits outside the capacity.
    std::size_t expected_size() const noexcept { return rendezvous() ? 0 : buffer.size(); }
    /// `capacity()` (bounded endpoints): the capacity given to `bounded`, 0 for a rendezvous.
    std::size_t expected_capacity() const noexcept { return capacity_; }
    /// The state the queries are answered from, for a mismatch's message.
    std::string lifecycle() const {
        return "senders " + std::to_string(senders) + ", receivers " + std::to_string(receivers) +
               (closed ? ", closed by a receiver" : "") + ", buffered " +
               std::to_string(buffer.size()) + ", given back " + std::to_string(given_back.size()) +
               ", granted not taken " + std::to_string(outstanding);
    }

    /// The invariants the design states; a failure here is a bug in the model.
    void check_invariants() const {
        if (real_receiver_waits() && ready()) mismatch("model: receivers wait on a value");
        if (!send_waiters.empty() && slot_free()) mismatch("model: senders wait on a free slot");
        if (rendezvous() && !buffer.empty()) mismatch("model: a rendezvous buffers a value");
    }

  private:
    bool bounded_;
    std::size_t capacity_;
    int which_;
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
    explicit harness(std::size_t capacity) : model_(bounded, capacity, 0), side_(false, 0, 1) {
        auto ch = Kind::make(capacity);
        auto side = cochan::mpmc::unbounded<payload>();
        side_source_ = make_op_source(side.second);
        side_core_ = side_source_.queue.get();
        side_tx_.emplace(std::move(side.first));
        side_rx_.emplace(std::move(side.second));
        side_.ops = &ops_;
        side_.completed = &completed_;
        model_.completed = &completed_;
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
        switch (opcode % 32) {
        case 16:
        case 17:
        case 18: select_awaitable(arg); return;
        case 19: try_select(arg); return;
        case 20:
        case 21: side_send(); return;
        case 22: side_recv(arg); return;
        case 23: side_close(); return;
        default: break;
        }
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

    model& chan(int c) { return c == 0 ? model_ : side_; }

    /// SPMC: sends on the one sender must not overlap (the library asserts).
    bool producer_busy() const { return !multi && has_pending_op(op_kind::send, 0); }

    cochan::default_stop_token token_for(op_record& op, std::uint8_t mode) {
        switch (mode % 4) {
        case 1: op.stop.emplace(); return op.stop->get_token();
        case 2: {
            cochan::default_stop_source s;
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
            // A rendezvous: only into a waiting receive (none waits while a send does).
            full = !(model_.rendezvous() && model_.send_waiters.empty() && model_.grant(v));
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
            cochan::default_stop_token token = token_for(op, arg >> 4);
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
            } else if (model_.rendezvous() && model_.grant(v)) {
                op.result = outcome::ok; // a waiting receive took it
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
        recv_on(0, k, arg);
    }

    /// A waiting receive on the side channel, competing with the selects there.
    void side_recv(std::uint8_t arg) { recv_on(1, -1, arg); }

    void recv_on(int c, int k, std::uint8_t arg) {
        model& m = chan(c);
        const int i = new_op(op_kind::recv, k);
        auto& op = ops_[static_cast<std::size_t>(i)];
        op.channel = c;
        cochan::default_stop_token token = token_for(op, arg >> 4);
        note((c == 0 ? "recv rx" + std::to_string(k) : std::string("recv side")) + " as op" +
             std::to_string(i) + (token.stop_requested() ? " (stopped token)" : ""));
        bool waits = false;
        if (token.stop_requested()) {
            op.result = outcome::cancelled;
        } else if (m.ready()) {
            op.value = m.take_now();
            op.result = outcome::ok;
        } else if (m.receiving_ends()) {
            op.result = outcome::disconnected;
        } else {
            m.recv_waiters.push_back(i);
            waits = true;
        }
        if (c == 0) {
            op.recv_task = recv_op(*rx_[static_cast<std::size_t>(k)], token, sched_);
        } else {
            op.recv_task = recv_op(*side_rx_, token, sched_);
        }
        started(i, waits);
    }

    /// `co_await cochan::select(token, main, side)` (arg bit 0 clear) or `(token, side, main)`:
    /// linked in both FIFOs unless a branch finds a value (lowest index first) or every
    /// channel has ended.
    void select_awaitable(std::uint8_t arg) {
        const int k = pick(rx_, arg >> 1);
        if (k < 0) return;
        const int i = new_op(op_kind::select, k);
        auto& op = ops_[static_cast<std::size_t>(i)];
        op.main_first = (arg & 1) == 0;
        cochan::default_stop_token token = token_for(op, arg >> 4);
        note(std::string("select ") + (op.main_first ? "(rx" : "(side, rx") + std::to_string(k) +
             (op.main_first ? ", side)" : ")") + " as op" + std::to_string(i) +
             (token.stop_requested() ? " (stopped token)" : ""));
        bool waits = false;
        if (token.stop_requested()) {
            op.result = outcome::cancelled;
        } else {
            for (int b = 0; b < 2 && op.from < 0; ++b) {
                const int c = (b == 0) == op.main_first ? 0 : 1;
                model& m = chan(c);
                if (m.ready()) {
                    op.value = m.take_now();
                    op.from = c;
                    op.result = outcome::ok;
                } else if (!m.receiving_ends()) {
                    m.recv_waiters.push_back(i);
                    ++op.live;
                }
            }
            if (op.from >= 0) {
                model_.unlink(i); // a branch linked before the one that took a value
                side_.unlink(i);
            } else if (op.live == 0) {
                op.result = outcome::disconnected;
            } else {
                waits = true;
            }
        }
        const auto& rx = *rx_[static_cast<std::size_t>(k)];
        op.select_task = op.main_first ? select_op(rx, *side_rx_, token, sched_)
                                       : select_op(*side_rx_, rx, token, sched_);
        started(i, waits);
    }

    /// cochan::try_select over the main and side channels, in the order of arg bit 0.
    void try_select(std::uint8_t arg) {
        const int k = pick(rx_, arg >> 1);
        if (k < 0) return;
        const bool main_first = (arg & 1) == 0;
        note(std::string("try_select ") + (main_first ? "(rx" : "(side, rx") + std::to_string(k) +
             (main_first ? ", side)" : ")"));
        int from = -1;
        int value = -1;
        bool ended = true;
        for (int b = 0; b < 2 && from < 0; ++b) {
            const int c = (b == 0) == main_first ? 0 : 1;
            model& m = chan(c);
            if (m.ready()) {
                value = m.take_now();
                from = c;
            } else if (!m.receiving_ends()) {
                ended = false;
            }
        }
        const auto& rx = *rx_[static_cast<std::size_t>(k)];
        auto r = main_first ? cochan::try_select(rx, *side_rx_) : cochan::try_select(*side_rx_, rx);
        if (from >= 0) {
            if (!r) mismatch("try_select failed; the model has v" + std::to_string(value));
            const int index = (from == 0) == main_first ? 0 : 1;
            if (static_cast<int>(r->index()) != index)
                mismatch("try_select took from branch " + std::to_string(r->index()) +
                         "; the model says " + std::to_string(index));
            const payload& p = index == 0 ? std::get<0>(*r) : std::get<1>(*r);
            if (p.id() != value || !p.intact()) {
                mismatch("try_select got v" + std::to_string(p.id()) + "; the model says v" +
                         std::to_string(value));
            }
        } else {
            if (r) mismatch("try_select took a value; the model has none");
            const auto error = ended ? cochan::recv_errc::disconnected : cochan::recv_errc::empty;
            if (r.error() != error) mismatch("try_select failed for the wrong reason");
        }
        check_notified();
    }

    /// Sends a value on the side channel (unbounded: never waits).
    void side_send() {
        if (!side_tx_) return; // closed
        const int v = next_value_++;
        note("send side v" + std::to_string(v));
        const bool refused = side_.sends_refused();
        if (!refused) side_.deliver(v);
        auto r = side_tx_->send(payload(v));
        if (refused != !r)
            mismatch("side send: the model says " + std::string(refused ? "fails" : "succeeds"));
        if (!r && (r.error().value.id() != v || !r.error().value.intact()))
            mismatch("side send handed back another value");
        check_notified();
    }

    /// Closes the side channel's one sender: its waiting receives and select branches end.
    void side_close() {
        if (!side_tx_) return;
        note("close side");
        side_.sender_left();
        side_tx_.reset();
        check_notified();
    }

    void try_recv(std::uint8_t arg) {
        const int k = pick(rx_, arg);
        if (k < 0) return;
        note("try_recv rx" + std::to_string(k));
        std::optional<int> expected;
        cochan::recv_errc error = cochan::recv_errc::empty;
        if (model_.ready()) {
            expected = model_.take_now();
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
        while (expected.size() < max && model_.ready()) {
            expected.push_back(model_.take_now());
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
        // A select unlinks its losing branches (ghosts in the model).
        if (op.kind == op_kind::select) {
            model_.unlink(i);
            side_.unlink(i);
        }
        // A granted receive frees its slot as it takes the value (bounded).
        if (op.kind != op_kind::send && op.result == outcome::granted) {
            model& m = chan(op.kind == op_kind::select ? op.from : op.channel);
            if (m.bounded()) {
                --m.outstanding;
                m.admit();
            }
        }
        h.resume();
        if (!op.task_done()) {
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
            side_.unlink(i);
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
        model_.unlink(i); // unlinked (a select: every branch); nothing else happens
        side_.unlink(i);
        if (op.state != op_state::waiting && op.kind != op_kind::send &&
            op.result == outcome::granted) {
            // The grant goes back: to the next waiting receive, else the head of the buffer.
            chan(op.kind == op_kind::select ? op.from : op.channel).give_back(op.value);
        }
        op.state = op_state::finished;
        sched_.remove(op.handle());
        op.reset_task();
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
        if (k < 0 || has_pending_op(op_kind::recv, k) || has_pending_op(op_kind::select, k)) return;
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
        side_close();
        check_state();
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
        note("drop side rx");
        side_.receiver_left();
        side_rx_.reset();
        check_notified();
        check_state();
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
        const bool done = op.task_done();
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
        if (op.kind == op_kind::select) {
            auto& r = op.select_task.result();
            if (op.result == outcome::ok || op.result == outcome::granted) {
                if (!r)
                    mismatch(who + " (select) failed; the model gives it v" +
                             std::to_string(op.value));
                const int index = op.branch_of(op.from);
                if (static_cast<int>(r->index()) != index) {
                    mismatch(who + " (select) completed through branch " +
                             std::to_string(r->index()) + "; the model says " +
                             std::to_string(index));
                }
                const payload& p = index == 0 ? std::get<0>(*r) : std::get<1>(*r);
                if (p.id() != op.value || !p.intact()) {
                    mismatch(who + " (select) got v" + std::to_string(p.id()) +
                             "; the model says v" + std::to_string(op.value));
                }
            } else {
                const auto want = op.result == outcome::cancelled ? cochan::recv_errc::cancelled
                                                                  : cochan::recv_errc::disconnected;
                if (r) mismatch(who + " (select) got a value; the model says " + name(op.result));
                if (r.error() != want)
                    mismatch(who + " (select) failed for the wrong reason; the model says " +
                             name(op.result));
            }
            op.select_task.reset();
        } else if (op.kind == op_kind::recv) {
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
        const auto posted_expected = std::exchange(completed_, {});
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

    /// After every operation: size(), the lifecycle queries of every live endpoint
    /// (check_queries()), and exactly the values the model holds are alive.
    void check_state() {
        model_.check_invariants();
        side_.check_invariants();
        check_queries();
        const std::size_t size = core_->size();
        if (size != model_.buffer.size()) {
            mismatch("size() is " + std::to_string(size) + "; the model buffers " +
                     std::to_string(model_.buffer.size()));
        }
        if (side_core_->size() != side_.buffer.size()) {
            mismatch("the side channel's size() is " + std::to_string(side_core_->size()) +
                     "; the model buffers " + std::to_string(side_.buffer.size()));
        }
        std::vector<int> expected(static_cast<std::size_t>(next_value_), 0);
        for (int v : model_.buffer) ++expected[static_cast<std::size_t>(v)];
        for (int v : model_.given_back) ++expected[static_cast<std::size_t>(v)];
        for (int v : side_.buffer) ++expected[static_cast<std::size_t>(v)];
        for (const auto& op : ops_) {
            if (!op.pending() || op.value < 0) continue;
            // NOLINTNEXTLINE(bugprone-branch-clone): two reasons a value is still out there
            if (op.kind != op_kind::send && op.state == op_state::completed) {
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

    /// The lifecycle queries of every live endpoint of both channels: `is_closed()`, `size()`,
    /// `empty()` and, on bounded endpoints, `capacity()`, each compared with what
    /// docs/reference.md says it answers in the model's state (model::sender_is_closed() and
    /// the rest). The harness runs on one thread and nothing runs between two of its calls, so
    /// no answer can be stale: each must be exact.
    void check_queries() const {
        // Bounded endpoints (rendezvous too) have capacity(), unbounded ones none: so the
        // `requires` in check_queries_of() skips no capacity() that exists.
        static_assert(requires(const sender& tx) { tx.capacity(); } == bounded);
        static_assert(requires(const receiver& rx) { rx.capacity(); } == bounded);
        for (std::size_t k = 0; k < max_endpoints; ++k) {
            if (tx_[k]) {
                check_queries_of(*tx_[k], "tx" + std::to_string(k), model_,
                                 model_.sender_is_closed(tx_closed_[k]));
            }
            if (rx_[k]) {
                check_queries_of(*rx_[k], "rx" + std::to_string(k), model_,
                                 model_.receiver_is_closed());
            }
        }
        // The side channel's one sender is never closed in place: side_close() destroys it.
        if (side_tx_) check_queries_of(*side_tx_, "side tx", side_, side_.sender_is_closed(false));
        if (side_rx_) check_queries_of(*side_rx_, "side rx", side_, side_.receiver_is_closed());
    }

    template <class Endpoint>
    static void check_queries_of(const Endpoint& e, const std::string& who, const model& m,
                                 bool closed) {
        const auto context = [&] { return " (model: " + m.lifecycle() + ")"; };
        if (e.is_closed() != closed) {
            mismatch(who + ".is_closed() is " + (closed ? "false" : "true") + "; the model says " +
                     (closed ? "true" : "false") + context());
        }
        // sender_count(), receiver_count(): the connected endpoints the model counts (a closed
        // sender no longer counts; a receiver that closed the channel still does).
        if (e.sender_count() != static_cast<std::size_t>(m.senders)) {
            mismatch(who + ".sender_count() is " + std::to_string(e.sender_count()) +
                     "; the model says " + std::to_string(m.senders) + context());
        }
        if (e.receiver_count() != static_cast<std::size_t>(m.receivers)) {
            mismatch(who + ".receiver_count() is " + std::to_string(e.receiver_count()) +
                     "; the model says " + std::to_string(m.receivers) + context());
        }
        const std::size_t size = e.size();
        if (size != m.expected_size()) {
            mismatch(who + ".size() is " + std::to_string(size) + "; the model says " +
                     std::to_string(m.expected_size()) + context());
        }
        if (e.empty() != (m.expected_size() == 0)) {
            mismatch(who + ".empty() is " + (e.empty() ? "true" : "false") + "; the model says " +
                     (m.expected_size() == 0 ? "true" : "false") + context());
        }
        // capacity(): bounded endpoints only (a deleted member on unbounded ones).
        if constexpr (requires { e.capacity(); }) {
            if (e.capacity() != m.expected_capacity()) {
                mismatch(who + ".capacity() is " + std::to_string(e.capacity()) +
                         "; the model says " + std::to_string(m.expected_capacity()));
            }
        }
    }

    using source_type = decltype(make_op_source(std::declval<const receiver&>()));
    using core_type = std::remove_pointer_t<decltype(std::declval<source_type&>().queue.get())>;

    using side_channel = decltype(cochan::mpmc::unbounded<payload>());
    using side_source_type =
        decltype(make_op_source(std::declval<const side_channel::second_type&>()));
    using side_core_type =
        std::remove_pointer_t<decltype(std::declval<side_source_type&>().queue.get())>;

    model model_;
    model side_;                 // the side channel: MPMC unbounded, one sender, one receiver
    std::vector<int> completed_; // ops completed by the current action, in notification order
    picking_scheduler sched_;
    source_type source_;
    core_type* core_ = nullptr;
    side_source_type side_source_;
    side_core_type* side_core_ = nullptr;
    std::array<std::optional<sender>, max_endpoints> tx_;
    std::array<bool, max_endpoints> tx_closed_{};
    std::array<std::optional<receiver>, max_endpoints> rx_;
    std::optional<side_channel::first_type> side_tx_;
    std::optional<side_channel::second_type> side_rx_;
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
    const std::size_t shape = (data[0] >> 1) % 6; // 0: unbounded, 1..4: capacity, 5: rendezvous
    if (g_verbose) {
        std::printf("%s %s(%zu)\n", multi ? "mpmc" : "spmc",
                    shape == 0   ? "unbounded"
                    : shape == 5 ? "rendezvous"
                                 : "bounded",
                    shape == 5 ? 0 : shape);
    }
    using namespace cochan_test;
    if (shape == 0) {
        if (multi) {
            run_kind<mpmc_unbounded<payload>>(0, data + 1, size - 1);
        } else {
            run_kind<spmc_unbounded<payload>>(0, data + 1, size - 1);
        }
    } else if (shape == 5) {
        // Capacity 0: the model's bounded channel without a slot.
        if (multi) {
            run_kind<mpmc_rendezvous<payload>>(0, data + 1, size - 1);
        } else {
            run_kind<spmc_rendezvous<payload>>(0, data + 1, size - 1);
        }
    } else if (multi) {
        run_kind<mpmc_bounded<payload>>(shape, data + 1, size - 1);
    } else {
        run_kind<spmc_bounded<payload>>(shape, data + 1, size - 1);
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
