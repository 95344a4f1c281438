// cochan: the requirements on channel payloads and on resumption targets, and the extension
// point that adapts an executor type to `resume_on`. Public; compiles on its own.
#pragma once

#include <concepts>
#include <coroutine>
#include <type_traits>
#include <utility>

namespace cochan {

namespace detail {
// Named so that clang-format 14 leaves the concept below readable.
template <class P> using stored_ref_t = std::decay_t<P>&; // what a poster is called through
using any_handle = std::coroutine_handle<>;               // what it is called with
} // namespace detail

/// A type a channel can carry: a move-constructible object type (move-only types included).
/// References, arrays, `void` and `const` types are rejected with this concept's name in the
/// compiler's message.
template <class T>
concept channel_value = std::is_object_v<T> && !std::is_const_v<T> && !std::is_array_v<T> &&
                        std::move_constructible<T> && std::destructible<T>;

/// Something `resume_on` can resume a coroutine through: a thread pool's enqueue, an event
/// loop's post. It is called once, with the suspended coroutine's handle, after the channel's
/// lock is released. It must only enqueue the handle (not resume it before returning); if it
/// throws, the coroutine resumes inline on the completing thread instead (nothing is lost).
template <class P>
concept poster = std::move_constructible<std::decay_t<P>> &&
    std::invocable<detail::stored_ref_t<P>, detail::any_handle>;

/// `poster`'s former name, kept so that code written against it still compiles.
template <class P>
concept coroutine_poster = poster<P>;

/// Extension point: how to resume a coroutine through a `P` that is not itself invocable with
/// a handle (an executor type of some library). A specialization provides
/// `static auto make(P p)` returning a `poster`. `cochan/asio.hpp` specializes it for Asio
/// executors.
template <class P> struct poster_traits {};

/// Something `resume_on` accepts: a `poster`, or a type `poster_traits` adapts.
template <class P>
concept resume_target = poster<P> || requires(std::decay_t<P> p) {
    { poster_traits<std::decay_t<P>>::make(std::move(p)) } -> poster;
};

} // namespace cochan
