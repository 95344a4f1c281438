// recv_many against recv: the ecosystem batch (16,384 values, 1P/1C) with the consumer taking one
// value per `co_await rx.recv()` or up to 64 per `co_await rx.recv_many(out, 64)`, everything
// else equal. Names: `recv_many/<queue>/<runtime>/<cochan_spmc|cochan_mpmc>/<recv|recv_many64>`.
//
// current        producer and consumer are coroutines on the benchmark thread's event loop,
//                which resumes each inside a resumption scope; wake-ups use cochan's default,
//                so the consumer runs once the producer blocks and finds a backlog. (Without
//                scopes, as in the first run, docs/decisions.md, D-004, a waiting
//                consumer was resumed inside each send and never found more than one value.)
// current_posted the same with `.resume_on(loop)` on every operation: a woken consumer is
//                queued, the producer runs on until it blocks (bounded: 64 values buffered;
//                unbounded: all of them), and the consumer then finds a backlog to take.
// threads        the producer is an OS thread calling `blocking_send` (unbounded: `send`); the
//                consumer is a coroutine on a one-worker pool (`.resume_on(pool)`, the mt rows'
//                spinning pool): a two-thread pipeline.
//
// recv_many appends to a fixed 64-slot buffer of the consumer's frame (no allocation); every
// value taken is added to the tally, so the count and checksum are checked as everywhere.
#include "ecosystem.hpp"

#include "../common/channels.hpp"

#include <array>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace bench::eco {
namespace {

/// Values asked for per recv_many.
inline constexpr std::size_t many = 64;

/// A fixed buffer recv_many appends to (it needs `push_back(T&&)` only).
struct batch_buffer {
    std::array<std::uint64_t, many> values{};
    std::size_t size = 0;
    void push_back(std::uint64_t&& v) noexcept { values[size++] = v; }
};

enum class mode { current, current_posted, threads };

inline const char* name(mode m) {
    switch (m) {
    case mode::current: return "current";
    case mode::current_posted: return "current_posted";
    default: return "threads";
    }
}

/// Resumption policy of the `current` rows: cochan's default (no `.resume_on`).
struct resume_inline {};

template <bool Bounded, class Tx, class Post> task producer(Tx tx, Post post, completion& done) {
    {
        Tx mine = std::move(tx); // dropped inside the task: disconnection is timed
        for (std::uint64_t v = 1; v <= total_values; ++v) {
            if constexpr (!Bounded) {
                if (!mine.send(v)) fatal("recv_many: unbounded send failed");
            } else if constexpr (std::is_same_v<Post, resume_inline>) {
                if (!co_await mine.send(v)) fatal("recv_many: send failed");
            } else {
                if (!co_await mine.send(v).resume_on(post)) fatal("recv_many: send failed");
            }
        }
        mine.close();
    }
    done.finish();
}

template <bool Many, class Rx, class Post>
task consumer(Rx rx, tally& t, Post post, completion& done) {
    {
        Rx mine = std::move(rx);
        if constexpr (Many) {
            batch_buffer out;
            for (;;) {
                out.size = 0;
                bool got = false;
                if constexpr (std::is_same_v<Post, resume_inline>)
                    got = static_cast<bool>(co_await mine.recv_many(out, many));
                else
                    got = static_cast<bool>(co_await mine.recv_many(out, many).resume_on(post));
                if (!got) break; // disconnected and drained
                for (std::size_t i = 0; i < out.size; ++i) t.add(out.values[i]);
            }
        } else {
            for (;;) {
                if constexpr (std::is_same_v<Post, resume_inline>) {
                    auto r = co_await mine.recv();
                    if (!r) break;
                    t.add(*r);
                } else {
                    auto r = co_await mine.recv().resume_on(post);
                    if (!r) break;
                    t.add(*r);
                }
            }
        }
    }
    done.finish();
}

template <bool Multi, bool Bounded, bool Many, mode M> class recv_many_case {
    using tx_type = sender_t<Multi, Bounded>;

  public:
    recv_many_case(queue_kind, topology, unsigned) {
        if constexpr (M == mode::threads) {
            pool_.emplace(1, mt_pool_options);
            gang_.emplace(1);
            gang_->set_role([this](unsigned) { produce_blocking(); });
        }
    }

    void prepare(tallies& t) {
        auto [tx, rx] = make_channel<Multi, Bounded>();
        if constexpr (M == mode::threads) {
            done_.reset(1);
            consumer_ = consumer<Many>(std::move(rx), t[0], poster(), done_).handle();
            tx_.emplace(std::move(tx));
        } else {
            done_.reset(2);
            consumer_ = consumer<Many>(std::move(rx), t[0], poster(), done_).handle();
            producer_ = producer<Bounded>(std::move(tx), poster(), done_).handle();
        }
    }

    void run() {
        if constexpr (M == mode::threads) {
            pool_->post(consumer_);
            gang_->run("recv_many producer thread");
            done_.wait("recv_many consumer");
        } else {
            loop_.post(consumer_); // first, so it waits when the producer starts
            loop_.post(producer_);
            loop_.run_all();
            if (!done_.done()) fatal("recv_many: the loop ran dry with tasks still waiting");
        }
    }

  private:
    auto poster() {
        if constexpr (M == mode::current)
            return resume_inline{};
        else if constexpr (M == mode::current_posted)
            return loop_.executor();
        else
            return pool_->executor();
    }

    void produce_blocking() {
        tx_type mine = std::move(*tx_);
        tx_.reset();
        for (std::uint64_t v = 1; v <= total_values; ++v) {
            if (!mine.blocking_send(v)) fatal("recv_many: blocking_send failed");
        }
        mine.close();
    }

    event_loop loop_{true}; // resumption scopes
    completion done_;
    std::coroutine_handle<> consumer_, producer_;
    std::optional<tx_type> tx_; // threads: handed to the producer thread
    std::optional<cochan_test::thread_pool> pool_;
    std::optional<thread_gang> gang_; // last: its threads use the members above
};

template <bool Multi, bool Bounded, mode M> void add_pair(queue_kind q, const char* kind) {
    const std::string base =
        std::string("recv_many/") + bench::name(q) + "/" + name(M) + "/" + kind + "/";
    add_named<recv_many_case<Multi, Bounded, false, M>>(base + "recv", q, 0, {1, 1});
    add_named<recv_many_case<Multi, Bounded, true, M>>(base + "recv_many64", q, 0, {1, 1});
}

template <bool Bounded> void add_queue(queue_kind q) {
    add_pair<false, Bounded, mode::current>(q, "cochan_spmc");
    add_pair<true, Bounded, mode::current>(q, "cochan_mpmc");
    add_pair<false, Bounded, mode::current_posted>(q, "cochan_spmc");
    add_pair<true, Bounded, mode::current_posted>(q, "cochan_mpmc");
    add_pair<false, Bounded, mode::threads>(q, "cochan_spmc");
    add_pair<true, Bounded, mode::threads>(q, "cochan_mpmc");
}

} // namespace

void register_recv_many() {
    add_queue<true>(queue_kind::bounded);
    add_queue<false>(queue_kind::unbounded);
}

} // namespace bench::eco
