// cochan: the results of channel operations. Errors are values, never exceptions; the error
// enums are also `std::error_code` enums, for code that speaks that convention (Asio).
#pragma once

#include <exception>
#include <functional> // std::invoke
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

/// An error to build a `result` from, as `std::unexpected` (which C++20 lacks):
/// `return cochan::unexpected(recv_errc::empty);` in a function returning `recv_result<T>`.
template <class E> class unexpected {
  public:
    // The constraint keeps an unexpected out, so copy and move stay the copy and move
    // constructors; clang-tidy cannot see that.
    // NOLINTBEGIN(bugprone-forwarding-reference-overload)
    template <class G = E>
    requires(!std::is_same_v<std::remove_cvref_t<G>, unexpected> &&
             !std::is_same_v<std::remove_cvref_t<G>, std::in_place_t> &&
             std::is_constructible_v<E, G>) constexpr explicit unexpected(G&& e)
        : error_(std::forward<G>(e)) {}
    // NOLINTEND(bugprone-forwarding-reference-overload)
    template <class... Args>
    constexpr explicit unexpected(std::in_place_t, Args&&... args)
        : error_(std::forward<Args>(args)...) {}

    constexpr E& error() & noexcept { return error_; }
    constexpr const E& error() const& noexcept { return error_; }
    constexpr E&& error() && noexcept { return std::move(error_); }

    template <class G>
    friend constexpr bool operator==(const unexpected& a, const unexpected<G>& b) {
        return a.error() == b.error();
    }

  private:
    E error_;
};
template <class E> unexpected(E) -> unexpected<E>;

/// The tag of a `result`'s constructor that builds the error in place, as `std::unexpect`.
struct unexpect_t {
    explicit unexpect_t() = default;
};
inline constexpr unexpect_t unexpect{};

template <class V, class E> class result;

namespace detail {
template <class R> inline constexpr bool is_result = false;
template <class V, class E> inline constexpr bool is_result<result<V, E>> = true;
template <class U> inline constexpr bool is_unexpected = false;
template <class E> inline constexpr bool is_unexpected<unexpected<E>> = true;

/// A `U` a result<V, E> may be built from as its value: as std::expected's converting
/// constructor, not a tag, not a result, not an `unexpected`.
template <class U, class V>
concept result_value_arg =
    !std::is_same_v<std::remove_cvref_t<U>, std::in_place_t> &&
    !std::is_same_v<std::remove_cvref_t<U>, unexpect_t> && !is_result<std::remove_cvref_t<U>> &&
    !is_unexpected<std::remove_cvref_t<U>> && std::is_constructible_v<V, U>;

/// `x` with the value category of `Self` (std::forward_like, which C++20 lacks).
template <class Self, class X> constexpr decltype(auto) like(X& x) noexcept {
    if constexpr (std::is_rvalue_reference_v<Self&&>) {
        return std::move(x);
    } else {
        return (x);
    }
}
/// The monadic operations' overload set, shared by both result templates: each member passes
/// the result, with its value category, to `R`'s implementation (`R::and_then_` and so on).
template <class R> class result_monads {
  public:
    /// `f(value)` (`f()` for `result<void, E>`), a `result<U, E>`, if a value is held; else the
    /// error, as a `result<U, E>`.
    template <class F> auto and_then(F&& f) & { return R::and_then_(self(), std::forward<F>(f)); }
    template <class F> auto and_then(F&& f) const& {
        return R::and_then_(self(), std::forward<F>(f));
    }
    template <class F> auto and_then(F&& f) && {
        return R::and_then_(std::move(self()), std::forward<F>(f));
    }
    /// `result<U, E>` holding `f(value)` (`result<void, E>` if `f` returns nothing), or the error.
    template <class F> auto transform(F&& f) & { return R::transform_(self(), std::forward<F>(f)); }
    template <class F> auto transform(F&& f) const& {
        return R::transform_(self(), std::forward<F>(f));
    }
    template <class F> auto transform(F&& f) && {
        return R::transform_(std::move(self()), std::forward<F>(f));
    }
    /// `f(error)`, a `result<V, G>`, if an error is held; else the value, as a `result<V, G>`.
    template <class F> auto or_else(F&& f) & { return R::or_else_(self(), std::forward<F>(f)); }
    template <class F> auto or_else(F&& f) const& {
        return R::or_else_(self(), std::forward<F>(f));
    }
    template <class F> auto or_else(F&& f) && {
        return R::or_else_(std::move(self()), std::forward<F>(f));
    }
    /// `result<V, G>` holding the value, or `f(error)` as its error.
    template <class F> auto transform_error(F&& f) & {
        return R::transform_error_(self(), std::forward<F>(f));
    }
    template <class F> auto transform_error(F&& f) const& {
        return R::transform_error_(self(), std::forward<F>(f));
    }
    template <class F> auto transform_error(F&& f) && {
        return R::transform_error_(std::move(self()), std::forward<F>(f));
    }

  private:
    R& self() noexcept { return static_cast<R&>(*this); }
    const R& self() const noexcept { return static_cast<const R&>(*this); }
};
} // namespace detail

/// A value or an error, shaped like `std::expected<V, E>`: the same constructors (from a value,
/// from `cochan::unexpected(e)`, in place), accessors, `value_or` / `error_or`, the monadic
/// operations `and_then`, `transform`, `or_else`, `transform_error`, and `==`.
/// Thread safety: distinct objects: safe. Shared objects: unsafe.
template <class V, class E>
class [[nodiscard]] result : public detail::result_monads<result<V, E>> {
    friend detail::result_monads<result>;

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

    /// Holds a value-initialized value, as `std::expected`'s default constructor.
    result() requires std::is_default_constructible_v<V> : data_(std::in_place_index<0>) {}
    /// Holds `v`; implicit where `U` converts to `V` (`recv_result<int> r = 5;`). Never a
    /// result (result_value_arg), so copy and move stay the copy and move constructors.
    // NOLINTBEGIN(bugprone-forwarding-reference-overload)
    template <class U = V>
    requires detail::result_value_arg<U, V>
    explicit(!std::is_convertible_v<U, V>) result(U&& v)
        : data_(std::in_place_index<0>, std::forward<U>(v)) {}
    // NOLINTEND(bugprone-forwarding-reference-overload)
    /// Holds the error `e` carries (`recv_result<int> r = cochan::unexpected(recv_errc::empty);`).
    template <class G>
    requires std::is_constructible_v<E, const G&>
    explicit(!std::is_convertible_v<const G&, E>) result(const unexpected<G>& e)
        : data_(std::in_place_index<1>, e.error()) {}
    template <class G>
    requires std::is_constructible_v<E, G>
    explicit(!std::is_convertible_v<G, E>) result(unexpected<G>&& e)
        : data_(std::in_place_index<1>, std::move(e).error()) {}
    /// Holds an error built from `args`.
    template <class... Args>
    explicit result(unexpect_t, Args&&... args)
        : data_(std::in_place_index<1>, std::forward<Args>(args)...) {}

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

    /// The value, or `fallback` converted to `V`.
    template <class U> V value_or(U&& fallback) const& {
        return has_value() ? **this : static_cast<V>(std::forward<U>(fallback));
    }
    template <class U> V value_or(U&& fallback) && {
        return has_value() ? std::move(**this) : static_cast<V>(std::forward<U>(fallback));
    }
    /// The error, or `fallback` converted to `E`.
    template <class G = E> E error_or(G&& fallback) const& {
        return has_value() ? static_cast<E>(std::forward<G>(fallback)) : *std::get_if<1>(&data_);
    }
    template <class G = E> E error_or(G&& fallback) && {
        return has_value() ? static_cast<E>(std::forward<G>(fallback))
                           : std::move(*std::get_if<1>(&data_));
    }

    /// Equal: both hold equal values, or both equal errors.
    template <class V2, class E2>
    requires(!std::is_void_v<V2>) friend bool operator==(const result& a, const result<V2, E2>& b) {
        if (a.has_value() != b.has_value()) return false;
        return a.has_value() ? *a == *b : a.error() == b.error();
    }
    /// Holds a value equal to `v` (not a template, so a type that only wraps a comparison,
    /// as a test framework's expression does, never binds to it).
    friend bool operator==(const result& a, const V& v) { return a.has_value() && *a == v; }
    /// Holds an error equal to `e.error()`.
    template <class G> friend bool operator==(const result& a, const unexpected<G>& e) {
        return !a.has_value() && a.error() == e.error();
    }

  private:
    template <std::size_t I, class D> static auto& checked(D& data) {
        if (data.index() != I) throw bad_result_access{};
        return *std::get_if<I>(&data);
    }
    template <std::size_t I, class Self> static decltype(auto) get_(Self&& self) noexcept {
        return detail::like<Self>(*std::get_if<I>(&self.data_));
    }

    template <class Self, class F> static auto and_then_(Self&& self, F&& f) {
        using R = std::remove_cvref_t<
            std::invoke_result_t<F, decltype(get_<0>(std::forward<Self>(self)))>>;
        static_assert(detail::is_result<R>, "and_then: the function must return a cochan::result");
        static_assert(std::is_same_v<typename R::error_type, E>,
                      "and_then: the function's result must have the same error type");
        if (self.has_value())
            return std::invoke(std::forward<F>(f), get_<0>(std::forward<Self>(self)));
        return R(unexpect, get_<1>(std::forward<Self>(self)));
    }
    template <class Self, class F> static auto transform_(Self&& self, F&& f) {
        using U =
            std::remove_cv_t<std::invoke_result_t<F, decltype(get_<0>(std::forward<Self>(self)))>>;
        if (!self.has_value()) return result<U, E>(unexpect, get_<1>(std::forward<Self>(self)));
        if constexpr (std::is_void_v<U>) {
            std::invoke(std::forward<F>(f), get_<0>(std::forward<Self>(self)));
            return result<U, E>(std::in_place);
        } else {
            return result<U, E>(std::in_place,
                                std::invoke(std::forward<F>(f), get_<0>(std::forward<Self>(self))));
        }
    }
    template <class Self, class F> static auto or_else_(Self&& self, F&& f) {
        using R = std::remove_cvref_t<
            std::invoke_result_t<F, decltype(get_<1>(std::forward<Self>(self)))>>;
        static_assert(detail::is_result<R>, "or_else: the function must return a cochan::result");
        static_assert(std::is_same_v<typename R::value_type, V>,
                      "or_else: the function's result must have the same value type");
        if (self.has_value()) return R(std::in_place, get_<0>(std::forward<Self>(self)));
        return std::invoke(std::forward<F>(f), get_<1>(std::forward<Self>(self)));
    }
    template <class Self, class F> static auto transform_error_(Self&& self, F&& f) {
        using G =
            std::remove_cv_t<std::invoke_result_t<F, decltype(get_<1>(std::forward<Self>(self)))>>;
        if (self.has_value()) return result<V, G>(std::in_place, get_<0>(std::forward<Self>(self)));
        return result<V, G>(unexpect,
                            std::invoke(std::forward<F>(f), get_<1>(std::forward<Self>(self))));
    }

    std::variant<V, E> data_;
};

// result_destructor_note: both `result` templates have a user-provided (empty) destructor, so
// they are never trivially copyable and are returned in memory, constructed in place. A
// trivially copyable 16-byte result (`recv_result<std::uint64_t>`) lets g++ build the result of
// `auto r = co_await rx.recv()` on the stack in two stores (the value, then the variant's
// index) and copy it into the coroutine frame with one 16-byte load, which the CPU cannot
// forward from two smaller stores: a store-forwarding stall on every value received
// (docs/decisions.md, D-017).

/// Success without a value, or an error.
template <class E>
class [[nodiscard]] result<void, E> : public detail::result_monads<result<void, E>> {
    friend detail::result_monads<result>;

  public:
    using value_type = void;
    using error_type = E;

    /// Not awaitable, as the primary template (an unbounded `send(v)` returns one of these).
    void await_ready() const = delete;       // a result is not awaitable: drop the co_await
    void await_suspend(auto) const = delete; // a result is not awaitable: drop the co_await
    void await_resume() const = delete;      // a result is not awaitable: drop the co_await

    /// Success.
    explicit result(std::in_place_t) noexcept {}
    /// Success, as `std::expected<void, E>`'s default constructor.
    result() noexcept = default;
    /// Holds the error `e` carries.
    template <class G>
    requires std::is_constructible_v<E, const G&>
    explicit(!std::is_convertible_v<const G&, E>) result(const unexpected<G>& e)
        : error_(e.error()) {}
    template <class G>
    requires std::is_constructible_v<E, G>
    explicit(!std::is_convertible_v<G, E>) result(unexpected<G>&& e)
        : error_(std::move(e).error()) {}
    /// Holds an error built from `args`.
    template <class... Args>
    explicit result(unexpect_t, Args&&... args)
        : error_(std::in_place, std::forward<Args>(args)...) {}

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

    /// The error, or `fallback` converted to `E`.
    template <class G = E> E error_or(G&& fallback) const& {
        return has_value() ? static_cast<E>(std::forward<G>(fallback)) : *error_;
    }
    template <class G = E> E error_or(G&& fallback) && {
        return has_value() ? static_cast<E>(std::forward<G>(fallback)) : std::move(*error_);
    }

    /// Equal: both succeeded, or both hold equal errors.
    template <class E2> friend bool operator==(const result& a, const result<void, E2>& b) {
        if (a.has_value() != b.has_value()) return false;
        return a.has_value() || a.error() == b.error();
    }
    /// Holds an error equal to `e.error()`.
    template <class G> friend bool operator==(const result& a, const unexpected<G>& e) {
        return !a.has_value() && a.error() == e.error();
    }

  private:
    E& checked() {
        if (!error_) throw bad_result_access{};
        return *error_;
    }
    template <class Self> static decltype(auto) error_of(Self&& self) noexcept {
        return detail::like<Self>(*self.error_);
    }

    template <class Self, class F> static auto and_then_(Self&& self, F&& f) {
        using R = std::remove_cvref_t<std::invoke_result_t<F>>;
        static_assert(detail::is_result<R>, "and_then: the function must return a cochan::result");
        static_assert(std::is_same_v<typename R::error_type, E>,
                      "and_then: the function's result must have the same error type");
        if (self.has_value()) return std::invoke(std::forward<F>(f));
        return R(unexpect, error_of(std::forward<Self>(self)));
    }
    template <class Self, class F> static auto transform_(Self&& self, F&& f) {
        using U = std::remove_cv_t<std::invoke_result_t<F>>;
        if (!self.has_value()) return result<U, E>(unexpect, error_of(std::forward<Self>(self)));
        if constexpr (std::is_void_v<U>) {
            std::invoke(std::forward<F>(f));
            return result<U, E>(std::in_place);
        } else {
            return result<U, E>(std::in_place, std::invoke(std::forward<F>(f)));
        }
    }
    template <class Self, class F> static auto or_else_(Self&& self, F&& f) {
        using R = std::remove_cvref_t<
            std::invoke_result_t<F, decltype(error_of(std::forward<Self>(self)))>>;
        static_assert(detail::is_result<R>, "or_else: the function must return a cochan::result");
        static_assert(std::is_void_v<typename R::value_type>,
                      "or_else: the function's result must have the same value type (void)");
        if (self.has_value()) return R(std::in_place);
        return std::invoke(std::forward<F>(f), error_of(std::forward<Self>(self)));
    }
    template <class Self, class F> static auto transform_error_(Self&& self, F&& f) {
        using G =
            std::remove_cv_t<std::invoke_result_t<F, decltype(error_of(std::forward<Self>(self)))>>;
        if (self.has_value()) return result<void, G>(std::in_place);
        return result<void, G>(unexpect,
                               std::invoke(std::forward<F>(f), error_of(std::forward<Self>(self))));
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
