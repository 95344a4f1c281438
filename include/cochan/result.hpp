// cochan: the results of channel operations. Errors are values, never exceptions; the error
// enums are also `std::error_code` enums, for code that speaks that convention (Asio).
#pragma once

#include <exception>
#include <optional>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

namespace cochan {

/// Why a send did not deliver its value. Also a `std::error_code` enum (`make_error_code`
/// below); the values start at 1 because an `error_code` of 0 means success.
enum class send_errc {
    disconnected = 1, ///< every receiver is gone, or this sender was closed
    full,             ///< `try_send`: no free slot; a one-shot's `send`: a value was already sent
    cancelled,        ///< the operation's stop token was triggered before it was granted a slot
    timed_out,        ///< `blocking_send_for` / `_until` only: the deadline passed first
};

/// Why a receive produced no value. Also a `std::error_code` enum, as `send_errc`.
enum class recv_errc {
    disconnected = 1, ///< every sender is gone and the buffer is drained
    empty,            ///< `try_recv` only: nothing buffered, but a sender may still send
    cancelled,        ///< the operation's stop token was triggered before it was granted a value
    timed_out,        ///< `blocking_recv_for` / `_until` only: the deadline passed first
};

/// A short English description, for logs and messages.
constexpr const char* to_string(send_errc e) noexcept {
    switch (e) {
    case send_errc::disconnected: return "sending on a disconnected channel";
    case send_errc::full: return "sending on a full channel";
    case send_errc::cancelled: return "send cancelled";
    case send_errc::timed_out: return "send timed out";
    }
    return "unknown send error";
}

/// A short English description, for logs and messages.
constexpr const char* to_string(recv_errc e) noexcept {
    switch (e) {
    case recv_errc::disconnected: return "receiving on a disconnected channel";
    case recv_errc::empty: return "receiving on an empty channel";
    case recv_errc::cancelled: return "receive cancelled";
    case recv_errc::timed_out: return "receive timed out";
    }
    return "unknown receive error";
}

namespace detail {

constexpr bool would_block(send_errc e) noexcept {
    return e == send_errc::full;
}
constexpr bool would_block(recv_errc e) noexcept {
    return e == recv_errc::empty;
}

/// The error category of one of the errc enums: its name, `to_string` as the message, and the
/// portable conditions it matches (`cancelled` is `std::errc::operation_canceled`, `timed_out`
/// is `std::errc::timed_out`, `full` and `empty` are `std::errc::resource_unavailable_try_again`
/// as for a non-blocking pipe), so `ec == std::errc::operation_canceled` holds for a cancelled
/// cochan operation and a cancelled Asio one alike. Thread-safe (immutable).
template <class Errc> class errc_category final : public std::error_category {
  public:
    explicit constexpr errc_category(const char* name) noexcept : name_(name) {}

    const char* name() const noexcept override { return name_; }

    std::string message(int ev) const override { return to_string(static_cast<Errc>(ev)); }

    std::error_condition default_error_condition(int ev) const noexcept override {
        const auto e = static_cast<Errc>(ev);
        if (e == Errc::cancelled) return std::errc::operation_canceled;
        if (e == Errc::timed_out) return std::errc::timed_out;
        if (would_block(e)) return std::errc::resource_unavailable_try_again;
        return {ev, *this};
    }

  private:
    const char* name_; // immutable
};

} // namespace detail

/// The category of `send_errc` codes, named "cochan.send". One object per program.
inline const std::error_category& send_category() noexcept {
    static const detail::errc_category<send_errc> category("cochan.send");
    return category;
}

/// The category of `recv_errc` codes, named "cochan.recv". One object per program.
inline const std::error_category& recv_category() noexcept {
    static const detail::errc_category<recv_errc> category("cochan.recv");
    return category;
}

/// `std::error_code` support, found by argument-dependent lookup: `std::error_code ec =
/// recv_errc::cancelled;` and `ec == recv_errc::cancelled` work.
inline std::error_code make_error_code(send_errc e) noexcept {
    return {static_cast<int>(e), send_category()};
}

/// As for `send_errc`.
inline std::error_code make_error_code(recv_errc e) noexcept {
    return {static_cast<int>(e), recv_category()};
}

/// A failed send: the reason and the value that was not sent, handed back to the caller.
template <class T> struct send_error {
    send_errc reason;
    T value;
};

/// Thrown by `result::value()` and `result::error()` when the other alternative is held.
/// Reaching it is a programming error: test the result first.
class bad_result_access : public std::exception {
  public:
    const char* what() const noexcept override { return "cochan::result: bad access"; }
};

/// A value or an error, shaped like `std::expected<V, E>`.
/// Thread safety: distinct objects: safe. Shared objects: unsafe.
template <class V, class E> class [[nodiscard]] result {
  public:
    using value_type = V;
    using error_type = E;

    /// Not awaitable: a result is what an operation that never waits returned (an unbounded
    /// `send(v)`, every `try_*`); the compiler quotes this line when one is awaited.
    void await_ready() const = delete;       // a result is not awaitable: drop the co_await
    void await_suspend(auto) const = delete; // a result is not awaitable: drop the co_await
    void await_resume() const = delete;      // a result is not awaitable: drop the co_await

    /// Holds a value.
    template <class... Args>
    explicit result(std::in_place_t,
                    Args&&... args) noexcept(std::is_nothrow_constructible_v<V, Args...>)
        : data_(std::in_place_index<0>, std::forward<Args>(args)...) {}

    /// Holds an error.
    explicit result(std::in_place_index_t<1>,
                    E error) noexcept(std::is_nothrow_move_constructible_v<E>)
        : data_(std::in_place_index<1>, std::move(error)) {}

    // Copy and move as the variant does. The destructor is user-provided on purpose (see
    // result_destructor_note below); it does nothing. A defaulted move is noexcept exactly when
    // the variant's is (tests/cochan/result.cpp checks it); clang-tidy cannot see that.
    result(result&&) = default; // NOLINT(performance-noexcept-move-constructor)
    result(const result&) = default;
    result& operator=(result&&) = default; // NOLINT(performance-noexcept-move-constructor)
    result& operator=(const result&) = default;
    constexpr ~result() {} // NOLINT(modernize-use-equals-default): see result_destructor_note

    bool has_value() const noexcept { return data_.index() == 0; }
    explicit operator bool() const noexcept { return has_value(); }

    V& operator*() & noexcept { return *std::get_if<0>(&data_); }
    const V& operator*() const& noexcept { return *std::get_if<0>(&data_); }
    V&& operator*() && noexcept { return std::move(*std::get_if<0>(&data_)); }
    V* operator->() noexcept { return std::get_if<0>(&data_); }
    const V* operator->() const noexcept { return std::get_if<0>(&data_); }

    V& value() & { return checked<0>(data_); }
    const V& value() const& { return checked<0>(data_); }
    V&& value() && { return std::move(checked<0>(data_)); }

    E& error() & { return checked<1>(data_); }
    const E& error() const& { return checked<1>(data_); }
    E&& error() && { return std::move(checked<1>(data_)); }

  private:
    template <std::size_t I, class D> static auto& checked(D& data) {
        if (data.index() != I) throw bad_result_access{};
        return *std::get_if<I>(&data);
    }

    std::variant<V, E> data_;
};

// result_destructor_note: both `result` templates have a user-provided (empty) destructor, so
// they are never trivially copyable and are returned in memory, constructed in place. With a
// trivially copyable 16-byte result (`recv_result<std::uint64_t>`), g++ 12 built the result of
// `auto r = co_await rx.recv()` on the stack in two stores (the value, then the variant's
// index) and copied it into the coroutine frame with one 16-byte load, which the CPU cannot
// forward from two smaller stores: a store-forwarding stall on every value received. A loop of
// receives that complete at once took 18.3 ns per value with it and 11.5 ns without it (clang
// 14: 12.4 ns either way). docs/decisions.md, D-017.

/// Success without a value, or an error.
template <class E> class [[nodiscard]] result<void, E> {
  public:
    using value_type = void;
    using error_type = E;

    /// Not awaitable, as the primary template (an unbounded `send(v)` returns one of these).
    void await_ready() const = delete;       // a result is not awaitable: drop the co_await
    void await_suspend(auto) const = delete; // a result is not awaitable: drop the co_await
    void await_resume() const = delete;      // a result is not awaitable: drop the co_await

    /// Success.
    explicit result(std::in_place_t) noexcept {}

    // As the primary template (result_destructor_note).
    result(result&&) = default; // NOLINT(performance-noexcept-move-constructor)
    result(const result&) = default;
    result& operator=(result&&) = default; // NOLINT(performance-noexcept-move-constructor)
    result& operator=(const result&) = default;
    constexpr ~result() {} // NOLINT(modernize-use-equals-default): see result_destructor_note
    /// Holds an error.
    explicit result(std::in_place_index_t<1>,
                    E error) noexcept(std::is_nothrow_move_constructible_v<E>)
        : error_(std::move(error)) {}

    bool has_value() const noexcept { return !error_.has_value(); }
    explicit operator bool() const noexcept { return has_value(); }

    void operator*() const noexcept {}
    void value() const {
        if (error_) throw bad_result_access{};
    }

    E& error() & { return checked(); }
    const E& error() const& { return const_cast<result*>(this)->checked(); }
    E&& error() && { return std::move(checked()); }

  private:
    E& checked() {
        if (!error_) throw bad_result_access{};
        return *error_;
    }

    std::optional<E> error_;
};

/// The result of a send: success, or the reason and the unsent value.
template <class T> using send_result = result<void, send_error<T>>;
/// The result of a receive: the value, or why there is none.
template <class T> using recv_result = result<T, recv_errc>;

} // namespace cochan

template <> struct std::is_error_code_enum<cochan::send_errc> : std::true_type {};
template <> struct std::is_error_code_enum<cochan::recv_errc> : std::true_type {};
