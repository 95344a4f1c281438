// cochan: the bookkeeping that follows a value's move into a result, run only if the move
// succeeded.
#pragma once

#include <exception>
#include <type_traits>
#include <utility>

namespace cochan::detail {

/// Runs `f` when it goes out of scope, unless an exception thrown since it was made is unwinding
/// the scope. Every receive builds its result in place, in one move from where the value waits,
/// inside the return statement (`return R(std::in_place, std::move(*value));`), with one of these
/// declared before it: the value's storage is cleared (and a permit released, a slot marked
/// taken) only once that move succeeded; if it threw, the value stays where it was. For a `T`
/// whose move cannot throw, nothing is tested. Not thread-safe: one scope.
template <class T, class F> class after_move {
  public:
    explicit after_move(F f) noexcept : f_(std::move(f)) {}
    after_move(const after_move&) = delete;
    after_move& operator=(const after_move&) = delete;
    ~after_move() {
        if constexpr (!std::is_nothrow_move_constructible_v<T>) {
            if (std::uncaught_exceptions() != exceptions_) return;
        }
        f_();
    }

  private:
    F f_;
    int exceptions_ = std::is_nothrow_move_constructible_v<T> ? 0 : std::uncaught_exceptions();
};

/// `auto done = on_moved<T>([&]() noexcept { ... });` (an `after_move<T, F>`).
template <class T, class F> after_move<T, F> on_moved(F f) noexcept {
    return after_move<T, F>(std::move(f));
}

} // namespace cochan::detail
