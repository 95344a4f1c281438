// cochan: single-producer, multi-consumer channels. Compiles on its own.
#pragma once

#include <cochan/concepts.hpp>
#include <cochan/detail/factory.hpp>
#include <cochan/result.hpp>

#include <cstddef>
#include <utility>

/// Single-producer, multi-consumer channels: one move-only sender, any number of receiver
/// clones competing for the values; each value is received exactly once.
namespace cochan::spmc {

// Real types, not aliases, so that compiler messages name them
// (`cochan::spmc::bounded_sender<int>`).

/// The one producer of a bounded SPMC channel: move-only; `send`, `try_send` and `close` are
/// non-const members, and two sends must not overlap (checked). See `detail::basic_sender`
/// for every operation's waiting, resumption and exception guarantee.
template <channel_value T>
class bounded_sender
    : public detail::basic_sender<detail::bounded_queue<T, detail::single_producer>> {
  public:
    using detail::basic_sender<detail::bounded_queue<T, detail::single_producer>>::basic_sender;
    bounded_sender(const bounded_sender&) = delete; // the one producer: move it, never copy
    bounded_sender& operator=(const bounded_sender&) = delete;
    bounded_sender(bounded_sender&&) noexcept = default;
    bounded_sender& operator=(bounded_sender&&) noexcept = default;
    ~bounded_sender() = default;
};
/// A consumer of a bounded SPMC channel; copy to add competing consumers.
template <channel_value T>
class bounded_receiver
    : public detail::basic_receiver<detail::bounded_queue<T, detail::single_producer>> {
  public:
    using detail::basic_receiver<detail::bounded_queue<T, detail::single_producer>>::basic_receiver;
};
/// The one producer of an unbounded SPMC channel: move-only; `send` never waits.
template <channel_value T>
class unbounded_sender
    : public detail::basic_sender<detail::unbounded_queue<T, detail::single_producer>> {
  public:
    using detail::basic_sender<detail::unbounded_queue<T, detail::single_producer>>::basic_sender;
    unbounded_sender(const unbounded_sender&) = delete; // the one producer: move it, never copy
    unbounded_sender& operator=(const unbounded_sender&) = delete;
    unbounded_sender(unbounded_sender&&) noexcept = default;
    unbounded_sender& operator=(unbounded_sender&&) noexcept = default;
    ~unbounded_sender() = default;
};
/// A consumer of an unbounded SPMC channel; copy to add competing consumers.
template <channel_value T>
class unbounded_receiver
    : public detail::basic_receiver<detail::unbounded_queue<T, detail::single_producer>> {
  public:
    using detail::basic_receiver<
        detail::unbounded_queue<T, detail::single_producer>>::basic_receiver;
};

/// A channel that buffers at most `capacity` values; `co_await tx.send(v)` waits while full.
/// Throws `std::invalid_argument` when `capacity` is 0, `std::length_error` when it is larger
/// than memory can hold. Allocates the ring once, here.
template <channel_value T>
std::pair<bounded_sender<T>, bounded_receiver<T>> bounded(std::size_t capacity) {
    return detail::make_bounded<bounded_sender<T>, bounded_receiver<T>>(capacity,
                                                                        "cochan::spmc::bounded");
}

/// A rendezvous channel: the bounded endpoint pair with `capacity() == 0`. `co_await
/// tx.send(v)` completes only once a receiver has been granted `v`; `try_send(v)` succeeds
/// only when a receiver waits (else `full`, `v` back); `try_recv()` succeeds only when a
/// sender waits (it takes that sender's value and completes the send); `size()` is always 0.
/// (`bounded(0)` still throws: a rendezvous is asked for by name.)
template <channel_value T> std::pair<bounded_sender<T>, bounded_receiver<T>> rendezvous() {
    return detail::make_rendezvous<bounded_sender<T>, bounded_receiver<T>>();
}

/// A channel without a bound; `tx.send(v)` never waits. Memory grows with the backlog in
/// segments and is returned as they drain (one spare segment is kept).
template <channel_value T> std::pair<unbounded_sender<T>, unbounded_receiver<T>> unbounded() {
    return detail::make_unbounded<unbounded_sender<T>, unbounded_receiver<T>>();
}

} // namespace cochan::spmc
