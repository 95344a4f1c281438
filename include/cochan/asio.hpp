// cochan: the optional Asio adapter for standalone Asio (1.22 or later). Include it after Asio
// is available; the rest of cochan does not need it. For Boost.Asio, include
// <cochan/boost_asio.hpp> instead (or as well: the two compile together).
//
// `asio::awaitable` cannot co_await foreign awaiters (asio#795), so channel operations are
// offered as Asio asynchronous operations taking any completion token, with two completion
// conventions:
//
//     auto r = co_await cochan::asio::async_recv(rx, asio::use_awaitable);       // recv_result<T>
//     auto s = co_await cochan::asio::async_send(tx, job, asio::use_awaitable);  // send_result<T>
//     auto [ec, v] = co_await cochan::asio::async_recv_ec(rx, as_tuple(use_awaitable));
//     auto [ec, unsent] = co_await cochan::asio::async_send_ec(tx, job, as_tuple(use_awaitable));
//
// `async_recv_ec` completes with `void(std::error_code, T)`, `async_send_ec` with
// `void(std::error_code, std::optional<T>)` (the unsent value on failure); the codes are
// cochan's `recv_errc` / `send_errc`. And `co_await rx.recv().resume_on(executor)` accepts an
// Asio executor. The implementation is shared with Boost.Asio: cochan/detail/asio_adapter.hpp.
#pragma once

#include <cochan/cochan.hpp>

#include <asio/associated_allocator.hpp>
#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/cancellation_type.hpp>
#include <asio/defer.hpp>
#include <asio/execution/context.hpp>
#include <asio/execution/executor.hpp>
#include <asio/execution_context.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/is_executor.hpp>
#include <asio/post.hpp>
#include <asio/query.hpp>
#include <asio/redirect_error.hpp>
#include <asio/system_executor.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
// as_tuple(use_awaitable) completes inline too: as_tuple is in the library itself from Asio
// 1.24 (Boost 1.80), in `experimental` before.
#if __has_include(<asio/as_tuple.hpp>)
#include <asio/as_tuple.hpp>
#define COCHAN_ASIO_AS_TUPLE ::asio::as_tuple_t
#elif __has_include(<asio/experimental/as_tuple.hpp>)
#include <asio/experimental/as_tuple.hpp>
#define COCHAN_ASIO_AS_TUPLE ::asio::experimental::as_tuple_t
#endif

#include <system_error>

namespace cochan::asio {
/// The error code of `async_recv_ec` / `async_send_ec`: standalone Asio's, `std::error_code`.
/// cochan's `recv_errc` and `send_errc` convert to it (cochan/result.hpp).
using error_code = std::error_code;
} // namespace cochan::asio

#define COCHAN_ASIO_ADAPTER asio
// `use_awaitable` operations complete inline when they can (where Asio has coroutines).
#if defined(ASIO_HAS_CO_AWAIT)
#define COCHAN_ASIO_AWAITABLE 1
#else
#define COCHAN_ASIO_AWAITABLE 0
#endif
#define COCHAN_ASIO_LIBRARY ::asio
#include <cochan/detail/asio_adapter.hpp> // IWYU pragma: export
#undef COCHAN_ASIO_AWAITABLE
#undef COCHAN_ASIO_AS_TUPLE
#undef COCHAN_ASIO_ADAPTER
#undef COCHAN_ASIO_LIBRARY
