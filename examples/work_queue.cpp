// work_queue: one producer coroutine feeds jobs to N consumer coroutines through a bounded SPMC
// channel, each job to exactly one consumer. All run on cochan's thread pool
// (cochan/runtime.hpp): a consumer the producer wakes is taken by an idle worker, so consumers
// work in parallel with no `resume_on` anywhere.
//   usage: work_queue [jobs=100000] [consumers=4]
#include <cochan/runtime.hpp>
#include <cochan/spmc.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

struct job {
    std::uint64_t id;
    std::string payload;
};

struct alignas(64) tally { // one per coroutine, written by it only; aligned: no false sharing
    unsigned long long count = 0, id_sum = 0, bad = 0; // bad: payloads that do not match the id
};

// GCC 12 miscompiles an aggregate temporary with non-trivial members built inside a co_await, as
// in `co_await tx.send(job{...})`: it is copied bitwise (its string freed twice). Build it first.

// [example-begin]
cochan::job producer(cochan::spmc::bounded_sender<job> tx, std::uint64_t jobs, tally& sent) {
    for (std::uint64_t id = 1; id <= jobs; ++id) {
        job next{id, "job #" + std::to_string(id)}; // built first: GCC 12 workaround, see above
        auto r = co_await tx.send(std::move(next)); // suspends while the channel is full
        if (!r) break; // every receiver is gone; r.error().value hands the job back
        ++sent.count;
        sent.id_sum += id;
    }
    tx.close(); // consumers drain what is buffered, then recv() reports disconnected
}

cochan::job consumer(cochan::spmc::bounded_receiver<job> rx, tally& mine) {
    // Each job is received by exactly one consumer; r is false once drained and disconnected.
    // Woken, a consumer goes back to the pool: any idle worker runs it.
    while (auto r = co_await rx.recv()) {
        ++mine.count;
        mine.id_sum += r->id;
        mine.bad += r->payload == "job #" + std::to_string(r->id) ? 0 : 1; // the "work"
    }
}
// [example-end]

} // namespace

int main(int argc, char** argv) {
    const std::uint64_t jobs = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
    const auto consumers = static_cast<unsigned>(argc > 2 ? std::max(1, std::atoi(argv[2])) : 4);
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
    tally sent, total;
    std::vector<tally> received(consumers);
    cochan::thread_pool pool(threads);
    {
        auto [tx, rx] = cochan::spmc::bounded<job>(64);
        for (unsigned i = 0; i < consumers; ++i) pool.spawn(consumer(rx, received[i]));
        pool.spawn(producer(std::move(tx), jobs, sent));
    }            // main's own receiver copy goes away; the consumers hold theirs
    pool.join(); // every job finished

    for (unsigned i = 0; i < consumers; ++i) {
        std::printf("consumer %u: %llu jobs\n", i, received[i].count);
        total.count += received[i].count;
        total.id_sum += received[i].id_sum;
        total.bad += received[i].bad;
    }
    const bool ok = sent.count == jobs && total.count == sent.count &&
                    total.id_sum == sent.id_sum && total.bad == 0;
    std::printf("total: %llu of %llu jobs on %u threads, %llu bad\ncheck: %s\n", total.count,
                sent.count, threads, total.bad, ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
