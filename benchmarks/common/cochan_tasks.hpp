// The producer and consumer coroutines of the cochan cases (ecosystem/cochan.cpp and
// workdist/): a producer sends its values and closes; a consumer receives until disconnection,
// tallies each value and then does the case's work on it (none in the ecosystem workload).
#pragma once

#include "harness.hpp"

#include <cstdint>
#include <type_traits>
#include <utility>

namespace bench {

/// Resumption policy `Post` of the tasks below for cochan's default resumption (no
/// `.resume_on`); any other `Post` is an executor passed to `.resume_on(post)` on every operation.
struct resume_inline {};

/// Sends the values first+1 .. last, then closes. `Tx` is moved into the task, so its drop (the
/// disconnection) happens inside it, timed.
template <bool Bounded, class Tx, class Post>
task producer(Tx tx, std::uint64_t first, std::uint64_t last, Post post, completion& done) {
    {
        Tx mine = std::move(tx); // dropped inside the task: disconnection is timed
        for (std::uint64_t i = first; i < last; ++i) {
            std::uint64_t v = i + 1;
            if constexpr (!Bounded) {
                auto r = mine.send(v); // unbounded: synchronous
                if (!r) fatal("cochan: unbounded send failed");
            } else if constexpr (std::is_same_v<Post, resume_inline>) {
                auto r = co_await mine.send(v);
                if (!r) fatal("cochan: send failed");
            } else {
                auto r = co_await mine.send(v).resume_on(post);
                if (!r) fatal("cochan: send failed");
            }
        }
        mine.close();
    }
    done.finish();
}

/// Receives until the channel is disconnected and drained; each value is tallied, then handed
/// to `work`.
template <class Rx, class Post, class Work = no_work>
task consumer(Rx rx, tally& t, Post post, completion& done, Work work = {}) {
    {
        Rx mine = std::move(rx);
        for (;;) {
            if constexpr (std::is_same_v<Post, resume_inline>) {
                auto r = co_await mine.recv();
                if (!r) break; // disconnected and drained: no token, so never cancelled
                t.add(*r);
                work(*r);
            } else {
                auto r = co_await mine.recv().resume_on(post);
                if (!r) break;
                t.add(*r);
                work(*r);
            }
        }
    }
    done.finish();
}

} // namespace bench
