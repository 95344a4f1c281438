// cochan: multi-producer, multi-consumer channels. Compiles on its own.
#pragma once

#include <cochan/detail/concepts.hpp>
#include <cochan/detail/factory.hpp>
#include <cochan/result.hpp>

#include <cstddef>
#include <utility>

/// Multi-producer, multi-consumer channels: copyable senders and receivers; any number of
/// producers and competing consumers; each value is received exactly once.
namespace cochan::mpmc {

/// A producer of a bounded MPMC channel; copy to add producers. Send operations are const and
/// may be called from several threads at once. See `detail::basic_sender` for every
/// operation's waiting, resumption and exception guarantee.
template <channel_value T>
using bounded_sender = detail::basic_sender<detail::bounded_queue<T, detail::multi_producer>>;
/// A consumer of a bounded MPMC channel; copy to add competing consumers.
template <channel_value T>
using bounded_receiver = detail::basic_receiver<detail::bounded_queue<T, detail::multi_producer>>;
/// A producer of an unbounded MPMC channel; copy to add producers; `send` never waits.
template <channel_value T>
using unbounded_sender = detail::basic_sender<detail::unbounded_queue<T, detail::multi_producer>>;
/// A consumer of an unbounded MPMC channel; copy to add competing consumers.
template <channel_value T>
using unbounded_receiver =
    detail::basic_receiver<detail::unbounded_queue<T, detail::multi_producer>>;

/// A channel that buffers at most `capacity` values; `co_await tx.send(v)` waits while full.
/// Throws `std::invalid_argument` when `capacity` is 0. Allocates the ring once, here.
template <channel_value T>
std::pair<bounded_sender<T>, bounded_receiver<T>> bounded(std::size_t capacity) {
    return detail::make_bounded<T, detail::multi_producer>(capacity, "cochan::mpmc::bounded");
}

/// A channel without a bound; `tx.send(v)` never waits. Memory grows with the backlog in
/// segments and is returned as they drain (one spare segment is kept).
template <channel_value T> std::pair<unbounded_sender<T>, unbounded_receiver<T>> unbounded() {
    return detail::make_unbounded<T, detail::multi_producer>();
}

} // namespace cochan::mpmc
