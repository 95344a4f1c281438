// cochan: multi-producer, multi-consumer channels. Compiles on its own.
#pragma once

#include <cochan/concepts.hpp>
#include <cochan/detail/factory.hpp>
#include <cochan/result.hpp>

#include <cstddef>
#include <utility>

/// Multi-producer, multi-consumer channels: copyable senders and receivers; any number of
/// producers and competing consumers; each value is received exactly once.
namespace cochan::mpmc {

// Real types, not aliases, so that compiler messages name them
// (`cochan::mpmc::bounded_sender<int>`).

/// A producer of a bounded MPMC channel; copy to add producers. Send operations are const and
/// may be called from several threads at once. See `detail::basic_sender` for every
/// operation's waiting, resumption and exception guarantee.
template <channel_value T>
class bounded_sender
    : public detail::basic_sender<detail::bounded_queue<T, detail::multi_producer>> {
  public:
    using detail::basic_sender<detail::bounded_queue<T, detail::multi_producer>>::basic_sender;
};
/// A consumer of a bounded MPMC channel; copy to add competing consumers.
template <channel_value T>
class bounded_receiver
    : public detail::basic_receiver<detail::bounded_queue<T, detail::multi_producer>> {
  public:
    using detail::basic_receiver<detail::bounded_queue<T, detail::multi_producer>>::basic_receiver;
};
/// A producer of an unbounded MPMC channel; copy to add producers; `send` never waits.
template <channel_value T>
class unbounded_sender
    : public detail::basic_sender<detail::unbounded_queue<T, detail::multi_producer>> {
  public:
    using detail::basic_sender<detail::unbounded_queue<T, detail::multi_producer>>::basic_sender;
};
/// A consumer of an unbounded MPMC channel; copy to add competing consumers.
template <channel_value T>
class unbounded_receiver
    : public detail::basic_receiver<detail::unbounded_queue<T, detail::multi_producer>> {
  public:
    using detail::basic_receiver<
        detail::unbounded_queue<T, detail::multi_producer>>::basic_receiver;
};

/// A channel that buffers at most `capacity` values; `co_await tx.send(v)` waits while full.
/// Throws `std::invalid_argument` when `capacity` is 0, `std::length_error` when it is larger
/// than memory can hold. Allocates the ring once, here.
template <channel_value T>
std::pair<bounded_sender<T>, bounded_receiver<T>> bounded(std::size_t capacity) {
    return detail::make_bounded<bounded_sender<T>, bounded_receiver<T>>(capacity,
                                                                        "cochan::mpmc::bounded");
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

} // namespace cochan::mpmc
