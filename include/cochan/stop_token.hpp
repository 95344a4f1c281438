// cochan: stop tokens. Every cochan operation that takes a token (`recv(token)`,
// `send(v, token)`, `recv_many(out, max, token)`, `blocking_recv(token)`, `select(token, rx...)`
// ...) takes any `cochan::stoppable_token`: `std::stop_token`, `cochan::stop_token`, or a token
// of your own with the same shape. Without an argument the token type is
// `cochan::default_stop_token`: `std::stop_token` where the standard library has it, else
// `cochan::stop_token` (and on libstdc++ without a futex, MinGW-w64's: COCHAN_HAS_STD_STOP_TOKEN).
//
//     cochan::default_stop_source stop;  // std::stop_source, or cochan::stop_source
//     auto r = co_await rx.recv(stop.get_token());
//
// `cochan::stop_source`, `stop_token` and `stop_callback` are always defined: a small
// implementation of the standard's interface for standard libraries that lack <stop_token>
// (libc++ before LLVM 20 without -fexperimental-library, Apple's libc++).
#pragma once

#include <cochan/detail/config.hpp>

#include <atomic>
#include <concepts>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <version>

/// 1 where the standard library has a `std::stop_token` (`__cpp_lib_jthread`) to rely on, else
/// 0: libstdc++ without a futex (MinGW-w64) has one, but its `std::stop_callback` waits for a
/// callback running on another thread on a semaphore that can miss its notification there
/// (COCHAN_DETAIL_STD_ATOMIC_WAIT_SOUND), so the default is cochan's token. Define it to 0
/// yourself, in every translation unit alike, to make `cochan::stop_token` the default token
/// even where the standard one exists.
#ifndef COCHAN_HAS_STD_STOP_TOKEN
#if defined(__cpp_lib_jthread) && COCHAN_DETAIL_STD_ATOMIC_WAIT_SOUND
#define COCHAN_HAS_STD_STOP_TOKEN 1
#else
#define COCHAN_HAS_STD_STOP_TOKEN 0
#endif
#endif

#if defined(__cpp_lib_jthread)
#include <stop_token>
#endif

namespace cochan {

class stop_token;
class stop_source;
template <class F> class stop_callback;

/// Tag of `stop_source`'s constructor that makes a source without a stop state (as
/// `std::nostopstate`).
struct nostopstate_t {
    explicit nostopstate_t() = default;
};
inline constexpr nostopstate_t nostopstate{};

namespace detail {

/// A stop callback as the stop state sees it: a node of its list, and how to invoke it.
struct stop_callback_node {
    using run_fn = void (*)(stop_callback_node*) noexcept;
    explicit stop_callback_node(run_fn run) noexcept : run_(run) {}

    const run_fn run_;                   // set at construction, then only read
    stop_callback_node* prev_ = nullptr; // guarded by stop_state::mutex_
    stop_callback_node* next_ = nullptr; // guarded by stop_state::mutex_
    bool linked_ = false;                // guarded by stop_state::mutex_: listed, not yet run
};

/// The state shared by a `stop_source`, its copies, the tokens it gave and the callbacks
/// registered on them. One mutex serialises a stop request with every registration and
/// deregistration, so a callback runs exactly once or never; the callbacks themselves run
/// without it. Stop requests are rare and registrations cost one uncontended lock, which is
/// all this implementation is for (the standard library's, where there is one, is the default).
class stop_state {
  public:
    stop_state() = default;
    stop_state(const stop_state&) = delete;
    stop_state& operator=(const stop_state&) = delete;
    ~stop_state() = default;

    void retain() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
    /// The last reference deletes the state.
    void release() noexcept {
        // acq_rel: every use of the state by other owners happens before the deletion.
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy();
    }

    void add_source() noexcept { sources_.fetch_add(1, std::memory_order_relaxed); }
    void drop_source() noexcept { sources_.fetch_sub(1, std::memory_order_release); }

    bool requested() const noexcept { return requested_.load(std::memory_order_acquire); }
    /// Requested, or a source remains that could request it. `sources_` is read first, with
    /// acquire: a count of zero then shows a stop its last source requested before leaving.
    bool possible() const noexcept {
        return sources_.load(std::memory_order_acquire) > 0 || requested();
    }

    /// The first call marks the state stopped and runs the registered callbacks on this
    /// thread, most recently registered first, each without the lock; true if this call did.
    bool request_stop() noexcept {
        retain(); // a callback may destroy the last source (and its token) while running
        std::unique_lock lock(mutex_);
        const bool first = !requested_.load(std::memory_order_relaxed);
        if (first) {
            requested_.store(true, std::memory_order_release);
            requester_ = std::this_thread::get_id();
            while (head_ != nullptr) {
                stop_callback_node* node = head_;
                unlink(*node);
                running_ = node;
                lock.unlock();
                // The callback may destroy its own stop_callback here (remove() does not wait
                // on this thread); on another thread remove() waits until running_ moves on.
                // Nothing below touches `node`.
                node->run_(node);
                lock.lock();
                running_ = nullptr;
                ran_.notify_all();
            }
        }
        lock.unlock();
        release();
        return first;
    }

    /// Registers `node`: true if it is linked (request_stop() will run it unless remove()
    /// unlinks it first); false if it ran now, on this thread (a stop was requested already),
    /// or never will (no source is left to request one).
    bool add(stop_callback_node& node) noexcept {
        {
            std::lock_guard lock(mutex_);
            if (!requested_.load(std::memory_order_relaxed)) {
                if (sources_.load(std::memory_order_relaxed) == 0) return false;
                node.next_ = head_;
                if (head_ != nullptr) head_->prev_ = &node;
                head_ = &node;
                node.linked_ = true;
                return true;
            }
        }
        node.run_(&node);
        return false;
    }

    /// Deregisters a node add() linked: unlinks it if it has not run; if request_stop() is
    /// running it on another thread, waits until it has returned. On the thread running it
    /// (a callback destroying its own stop_callback), returns at once.
    void remove(stop_callback_node& node) noexcept {
        std::unique_lock lock(mutex_);
        if (node.linked_) {
            unlink(node);
        } else if (running_ == &node && requester_ != std::this_thread::get_id()) {
            // `node` is alive until this returns, so no other node can take its address.
            ran_.wait(lock, [&] { return running_ != &node; });
        }
    }

  private:
    /// Out of line: where request_stop() (a retain, then a release) is inlined into a caller
    /// that uses the state afterwards, g++ 12 -O3 cannot see that this release is never the
    /// last and warns of a use after free (-Wuse-after-free) at the later use.
    COCHAN_DETAIL_NOINLINE void destroy() noexcept { delete this; }

    void unlink(stop_callback_node& node) noexcept { // under mutex_
        if (node.prev_ != nullptr) {
            node.prev_->next_ = node.next_;
        } else {
            head_ = node.next_;
        }
        if (node.next_ != nullptr) node.next_->prev_ = node.prev_;
        node.prev_ = node.next_ = nullptr;
        node.linked_ = false;
    }

    // Sources, tokens, linked callbacks and a running request_stop() each hold one.
    std::atomic<std::size_t> refs_{1};
    // stop_sources sharing the state. Incremented by a copy (relaxed: its original holds one);
    // decremented with release when one goes (see possible()).
    std::atomic<std::size_t> sources_{1};
    // Set once, under mutex_, with release; read under mutex_ (relaxed) or without it (acquire).
    std::atomic<bool> requested_{false};
    std::mutex mutex_;
    std::condition_variable ran_;           // under mutex_: running_ changed
    stop_callback_node* head_ = nullptr;    // guarded by mutex_: the callbacks not yet run
    stop_callback_node* running_ = nullptr; // guarded by mutex_: the one request_stop() runs
    std::thread::id requester_;             // guarded by mutex_: the thread that requested
};

/// A callback that does nothing: the probe `stoppable_token` registers in its check.
struct stop_probe {
    void operator()() const noexcept {}
};

/// The callback type of a token: `Token::callback_type<F>` (C++26's shape, and
/// `cochan::stop_token`'s); `std::stop_callback<F>` for `std::stop_token`.
template <class Token, class F> struct stop_callback_of {};
template <class Token, class F>
requires requires {
    typename Token::template callback_type<F>;
}
struct stop_callback_of<Token, F> {
    using type = typename Token::template callback_type<F>;
};
#if defined(__cpp_lib_jthread)
template <class F> struct stop_callback_of<std::stop_token, F> {
    using type = std::stop_callback<F>;
};
#endif

} // namespace detail

/// The type of a stop callback that runs `F` when `Token` is stopped (C++26's
/// `std::stop_callback_for_t`).
template <class Token, class F>
using stop_callback_for_t = typename detail::stop_callback_of<Token, F>::type;

/// What cochan's operations take as a stop token: copyable, with `stop_requested()` and
/// `stop_possible()` (both noexcept), and a callback type (`stop_callback_for_t`) constructed
/// from the token and an invocable, which it runs once when a stop is requested (at once if one
/// was) unless destroyed first, and whose destructor waits for a run in progress on another
/// thread. `std::stop_token` and `cochan::stop_token` are such tokens.
template <class Token>
concept stoppable_token = std::copy_constructible<Token> && requires(const Token& token) {
    { token.stop_requested() }
    noexcept->std::convertible_to<bool>;
    { token.stop_possible() }
    noexcept->std::convertible_to<bool>;
    typename stop_callback_for_t<Token, detail::stop_probe>;
} && std::constructible_from < stop_callback_for_t<Token, detail::stop_probe>,
const Token&, detail::stop_probe > ;

/// A view of a stop state: whether a stop was requested, and where to register callbacks. A
/// default-constructed token has no state: never stopped, `stop_possible()` false.
/// Thread safety: distinct tokens (copies included): safe; one token: as an `int`.
class stop_token {
  public:
    template <class F> using callback_type = stop_callback<F>;

    stop_token() noexcept = default;
    stop_token(const stop_token& other) noexcept : state_(other.state_) {
        if (state_ != nullptr) state_->retain();
    }
    stop_token(stop_token&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
    stop_token& operator=(stop_token other) noexcept {
        swap(other);
        return *this;
    }
    ~stop_token() {
        if (state_ != nullptr) state_->release();
    }

    bool stop_requested() const noexcept { return state_ != nullptr && state_->requested(); }
    bool stop_possible() const noexcept { return state_ != nullptr && state_->possible(); }

    void swap(stop_token& other) noexcept { std::swap(state_, other.state_); }
    friend void swap(stop_token& a, stop_token& b) noexcept { a.swap(b); }
    /// Same stop state (or both without one).
    friend bool operator==(const stop_token& a, const stop_token& b) noexcept {
        return a.state_ == b.state_;
    }

  private:
    friend class stop_source;
    template <class F> friend class stop_callback;

    explicit stop_token(detail::stop_state* state) noexcept : state_(state) {
        if (state_ != nullptr) state_->retain();
    }

    detail::stop_state* state_ = nullptr;
};

/// Owns a stop state and requests the stop: as `std::stop_source`. Copies share the state.
/// Thread safety: distinct sources (copies included): safe; one source: its const members and
/// request_stop() from any number of threads at once.
class stop_source {
  public:
    /// A new stop state. Throws `std::bad_alloc` if it cannot be allocated.
    stop_source() : state_(new detail::stop_state) {}
    explicit stop_source(nostopstate_t) noexcept {}
    stop_source(const stop_source& other) noexcept : state_(other.state_) {
        if (state_ != nullptr) {
            state_->retain();
            state_->add_source();
        }
    }
    stop_source(stop_source&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
    stop_source& operator=(stop_source other) noexcept {
        swap(other);
        return *this;
    }
    ~stop_source() {
        if (state_ != nullptr) {
            state_->drop_source();
            state_->release();
        }
    }

    stop_token get_token() const noexcept { return stop_token(state_); }
    bool stop_possible() const noexcept { return state_ != nullptr; }
    bool stop_requested() const noexcept { return state_ != nullptr && state_->requested(); }
    /// Requests the stop: the first request runs every registered callback on this thread
    /// before it returns true; later ones (and a source without a state) return false.
    bool request_stop() noexcept { return state_ != nullptr && state_->request_stop(); }

    void swap(stop_source& other) noexcept { std::swap(state_, other.state_); }
    friend void swap(stop_source& a, stop_source& b) noexcept { a.swap(b); }
    friend bool operator==(const stop_source& a, const stop_source& b) noexcept {
        return a.state_ == b.state_;
    }

  private:
    detail::stop_state* state_ = nullptr;
};

/// Runs `F` once when a stop is requested on its token, as `std::stop_callback`: on the thread
/// that requests it, or in the constructor if a stop was requested already; never if the
/// callback is destroyed first or no source can request a stop. The destructor deregisters it,
/// waiting for a run in progress on another thread (a callback may destroy its own
/// stop_callback: that does not wait). If `F` throws, `std::terminate` is called.
/// Thread safety: constructed and destroyed on any threads, each object once.
template <class F> class stop_callback : private detail::stop_callback_node {
    static_assert(std::is_nothrow_destructible_v<F> && std::is_invocable_v<F>);

  public:
    using callback_type = F;

    template <class C>
    requires std::constructible_from<F, C>
    explicit stop_callback(const stop_token& token,
                           C&& callback) noexcept(std::is_nothrow_constructible_v<F, C>)
        : stop_callback_node(&run), callback_(std::forward<C>(callback)) {
        attach(token.state_);
    }
    template <class C>
    requires std::constructible_from<F, C>
    explicit stop_callback(stop_token&& token,
                           C&& callback) noexcept(std::is_nothrow_constructible_v<F, C>)
        : stop_callback_node(&run), callback_(std::forward<C>(callback)) {
        attach(token.state_);
    }
    stop_callback(const stop_callback&) = delete;
    stop_callback& operator=(const stop_callback&) = delete;
    ~stop_callback() {
        if (state_ != nullptr) {
            state_->remove(*this);
            state_->release();
        }
    }

  private:
    /// Holds a reference to the state while linked (and until destroyed).
    void attach(detail::stop_state* state) noexcept {
        if (state == nullptr) return;
        state->retain();
        state_ = state; // before linking: request_stop() may run the callback at once
        if (!state->add(*this)) {
            state_ = nullptr;
            state->release();
        }
    }

    static void run(detail::stop_callback_node* node) noexcept {
        std::move(static_cast<stop_callback*>(node)->callback_)();
    }

    F callback_;
    detail::stop_state* state_ = nullptr; // held while registered
};

template <class F> stop_callback(stop_token, F) -> stop_callback<F>;

/// The token type of cochan's operations when none is named, and the source that makes it:
/// the standard library's where it has them (COCHAN_HAS_STD_STOP_TOKEN), else cochan's.
#if COCHAN_HAS_STD_STOP_TOKEN
using default_stop_token = std::stop_token;
using default_stop_source = std::stop_source;
#else
using default_stop_token = stop_token;
using default_stop_source = stop_source;
#endif

static_assert(stoppable_token<stop_token>);
static_assert(stoppable_token<default_stop_token>);

} // namespace cochan
