// cochan: single-producer, multi-consumer channels. Compiles on its own.
#pragma once

#include <cochan/detail/concepts.hpp>
#include <cochan/detail/factory.hpp>
#include <cochan/result.hpp>

#include <cstddef>
#include <utility>

/// Single-producer, multi-consumer channels: one move-only sender, any number of receiver
/// clones competing for the values; each value is received exactly once.
namespace cochan::spmc {

/// The one producer of a bounded SPMC channel: move-only; `send`, `try_send` and `close` are
/// non-const members, and two sends must not overlap (debug builds assert). See
/// `detail::basic_sender` for every operation's waiting, resumption and exception guarantee.
template <channel_value T>
using bounded_sender = detail::basic_sender<detail::bounded_queue<T, detail::single_producer>>;
/// A consumer of a bounded SPMC channel; copy to add competing consumers.
template <channel_value T>
using bounded_receiver = detail::basic_receiver<detail::bounded_queue<T, detail::single_producer>>;
/// The one producer of an unbounded SPMC channel: move-only; `send` never waits.
template <channel_value T>
using unbounded_sender = detail::basic_sender<detail::unbounded_queue<T, detail::single_producer>>;
/// A consumer of an unbounded SPMC channel; copy to add competing consumers.
template <channel_value T>
using unbounded_receiver =
    detail::basic_receiver<detail::unbounded_queue<T, detail::single_producer>>;

/// A channel that buffers at most `capacity` values; `co_await tx.send(v)` waits while full.
/// Throws `std::invalid_argument` when `capacity` is 0. Allocates the ring once, here.
template <channel_value T>
std::pair<bounded_sender<T>, bounded_receiver<T>> bounded(std::size_t capacity) {
    return detail::make_bounded<T, detail::single_producer>(capacity, "cochan::spmc::bounded");
}

/// A channel without a bound; `tx.send(v)` never waits. Memory grows with the backlog in
/// segments and is returned as they drain (one spare segment is kept).
template <channel_value T> std::pair<unbounded_sender<T>, unbounded_receiver<T>> unbounded() {
    return detail::make_unbounded<T, detail::single_producer>();
}

} // namespace cochan::spmc
