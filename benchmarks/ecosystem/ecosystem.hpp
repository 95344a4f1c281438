// The ecosystem benchmark: how its cases are named and registered. Each peer's file defines its
// cases and a register_*() function; main.cpp calls them in table order.
//
// A case is a class with
//   Case(queue_kind, topology, unsigned workers)   once per benchmark run: runtime, threads
//   void prepare(bench::tallies&)                  per sample, untimed: channel and tasks
//   void run()                                     per sample, timed: start, drain, complete
// and bench::measure() drives it.
#pragma once

#include "../common/harness.hpp"

#include <cstdint>
#include <string>

namespace bench::eco {

/// A runtime row of the table: `current` (workers == 0: the benchmark thread's event loop),
/// `mt2`/`mt4` (a pool of that many threads), or `threads` for the peers that run each producer
/// and consumer on its own OS thread whatever the row (W does not apply to them).
struct runtime {
    const char* name;
    unsigned workers;
};
inline constexpr runtime coroutine_runtimes[] = {{"current", 0}, {"mt2", 2}, {"mt4", 4}};
inline constexpr runtime os_threads{"threads", 0};
inline constexpr queue_kind queue_kinds[] = {queue_kind::bounded, queue_kind::unbounded};

/// `ecosystem/<queue>/<runtime>/<impl>/<topology>`; Google Benchmark appends `/manual_time`.
inline std::string case_name(queue_kind q, const runtime& rt, const char* impl, const topology& t) {
    return std::string("ecosystem/") + name(q) + "/" + rt.name + "/" + impl + "/" + t.name();
}

/// Registers `Case` under `name`; the benchmark function builds the case (runtime outside
/// every timed region) and hands it to the timing loop, with one tally per consumer of `t`.
/// Items processed: the batch's 16,384 values per sample, so Google Benchmark also reports
/// values/s.
template <class Case>
void add_named(const std::string& name, queue_kind q, unsigned workers, topology t) {
    benchmark::RegisterBenchmark(
        name.c_str(),
        [q, t, workers](benchmark::State& state) {
            Case c(q, t, workers);
            measure(state, c, t.consumers);
            state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(total_values));
        })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
}

/// Registers `Case` under its ecosystem name (`case_name`).
template <class Case> void add(queue_kind q, const runtime& rt, const char* impl, topology t) {
    add_named<Case>(case_name(q, rt, impl, t), q, rt.workers, t);
}

void register_limit();
void register_cochan();
void register_asio();
void register_boost_asio(); // Boost.Asio's channel and cochan through cochan::boost_asio
void register_boost_fiber();
void register_os_threads();
// The cases beside the ecosystem workload (benchmarks/README.md): recv_many against recv,
// select, rendezvous.
void register_recv_many();
void register_select();
void register_rendezvous();

} // namespace bench::eco
