// cochan: construction of a channel's shared queue and its first pair of endpoints.
#pragma once

#include <cochan/detail/competing_queue.hpp>
#include <cochan/detail/endpoints.hpp>
#include <cochan/detail/ring.hpp>
#include <cochan/detail/segmented_queue.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace cochan::detail {

template <class T, class Producers> using bounded_queue = competing_queue<T, ring<T>, Producers>;
template <class T, class Producers>
using unbounded_queue = competing_queue<T, segmented_queue<T>, Producers>;

/// The first pair of endpoints of a new queue: `Sender` and `Receiver` are public endpoint
/// types (they inherit basic_sender / basic_receiver of that queue).
template <class Sender, class Receiver, class Queue>
std::pair<Sender, Receiver> make_channel(Queue* q) noexcept {
    return {Sender(adopt_t{}, q), Receiver(adopt_t{}, q)};
}

/// `kind` names the factory in the exception's message, e.g. "cochan::spmc::bounded".
template <class Sender, class Receiver>
std::pair<Sender, Receiver> make_bounded(std::size_t capacity, const char* kind) {
    using T = typename Sender::value_type;
    if (capacity == 0) {
        throw std::invalid_argument(std::string(kind) +
                                    ": capacity must be greater than 0 (for a channel without a "
                                    "buffer, ask for rendezvous<T>())");
    }
    if (capacity > ring<T>::max_capacity()) {
        throw std::length_error(std::string(kind) + ": capacity " + std::to_string(capacity) +
                                " is larger than the largest ring of this type (" +
                                std::to_string(ring<T>::max_capacity()) + " values)");
    }
    using queue = bounded_queue<T, typename Sender::producers>;
    return make_channel<Sender, Receiver>(new queue(capacity));
}

/// A bounded queue of capacity 0: a send completes only into a receiver.
template <class Sender, class Receiver> std::pair<Sender, Receiver> make_rendezvous() {
    using queue = bounded_queue<typename Sender::value_type, typename Sender::producers>;
    return make_channel<Sender, Receiver>(new queue(0));
}

template <class Sender, class Receiver> std::pair<Sender, Receiver> make_unbounded() {
    using queue = unbounded_queue<typename Sender::value_type, typename Sender::producers>;
    return make_channel<Sender, Receiver>(new queue());
}

} // namespace cochan::detail
