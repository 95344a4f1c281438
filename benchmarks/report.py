#!/usr/bin/env python3
"""Turns the JSON of benchmarks/run.sh's rounds into the tables of benchmarks/README.md.

usage: report.py RESULTS_DIR [--readme PATH] [--settings TEXT] [--compiler PATH]
       report.py RESULTS_DIR --adapter-before BEFORE_DIR

RESULTS_DIR holds round<R>-<binary>.json files, one per round and binary, each written by a
binary run with --benchmark_repetitions=N --benchmark_format=json: the C++ binaries, and the
Rust and Go peers (benchmarks/peers/), which write the same format. An empty file (a filter that
matched nothing in that binary) is skipped. For every case:

  round median   the median of that round's N repetitions (ms per batch, or ns per operation)
  value          the median of the round medians
  spread         (max - min) of the round medians, as a percentage of the value

Ecosystem rows are (queue, runtime, topology). The peers of a row are every implementation
that is neither cochan nor the limit: the coroutine peers measured on that runtime (C++, Rust
and Go alike), and the OS-thread peers (runtime `threads`, one measurement per queue and
topology, shown in every runtime row). ratio = cochan SPMC / fastest peer (cochan MPMC on the
8P rows, which have no SPMC), computed before rounding; below 1 means cochan is faster.

With --adapter-before, only the table of cochan through the Asio adapter beside Asio's channel
is printed, with BEFORE_DIR's run (another build, measured in alternation) as extra columns.

With --readme, the text between <!-- results:begin --> and <!-- results:end --> in PATH is
replaced by the tables and a description of the machine. Without it, the tables are printed.
"""

import argparse
import glob
import json
import os
import platform
import re
import statistics
import subprocess
import sys
from collections import defaultdict

QUEUES = ["bounded", "unbounded"]
RUNTIMES = ["current", "mt2", "mt4"]
TOPOLOGIES = ["1p1c", "1p2c", "1p4c", "1p8c", "8p1c", "8p8c"]
COCHAN = ["cochan_spmc", "cochan_mpmc"]
POSTED = "cochan_spmc_posted"  # SPMC with .resume_on(loop) / .resume_on(pool)
RUNTIME = "cochan_spmc_runtime"  # SPMC on cochan::thread_pool, default resumption (mt rows)
PLAIN = "cochan_spmc_plain"  # SPMC on a loop or pool with no cochan hook
CORO_PEERS = ["asio", "boost_fiber"]
# benchmarks/peers/: Rust (Tokio) and Go, measured on the same runtime rows as the C++ peers.
RUST_PEERS = ["async_channel", "flume"]
GO_PEERS = ["go_chan"]
RUNTIME_PEERS = CORO_PEERS + RUST_PEERS + GO_PEERS
THREAD_IMPLS = ["moodycamel", "mutex_deque", "cochan_blocking"]  # runtime `threads`
COLUMNS = COCHAN + [POSTED, RUNTIME, PLAIN] + RUNTIME_PEERS + THREAD_IMPLS
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"

UNIT_SCALE_TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def load(results_dir):
    """{case name: {"rounds": [[times ms]...], "counters": {name: [values]}}}"""
    cases = defaultdict(lambda: {"rounds": defaultdict(list), "counters": defaultdict(list)})
    files = sorted(glob.glob(os.path.join(results_dir, "round*-*.json")))
    if not files:
        sys.exit(f"report.py: no round*-*.json in {results_dir}")
    errors = []
    for path in files:
        rnd = int(re.match(r"round(\d+)-", os.path.basename(path)).group(1))
        if os.path.getsize(path) == 0:
            continue  # the binary matched none of --benchmark_filter's cases
        with open(path) as f:
            data = json.load(f)
        for b in data["benchmarks"]:
            if b.get("run_type", "iteration") != "iteration":
                continue
            name = re.sub(r"/(manual_time|real_time)$", "", b.get("run_name", b["name"]))
            if b.get("error_occurred"):
                errors.append(f"{name}: {b.get('error_message')}")
                continue
            ms = b["real_time"] * UNIT_SCALE_TO_MS[b.get("time_unit", "ns")]
            c = cases[name]
            c["rounds"][rnd].append(ms)
            for k in ("consumer_threads", "cpu_per_wall") + WORKDIST_COUNTERS:
                if k in b:
                    c["counters"][k].append(b[k])
    rounds = {re.match(r"round(\d+)-", os.path.basename(p)).group(1) for p in files}
    return cases, errors, len(rounds)


def summarise(cases):
    """{name: (value ms, spread fraction, counters {k: median})}"""
    out = {}
    for name, c in cases.items():
        medians = [statistics.median(v) for _, v in sorted(c["rounds"].items())]
        value = statistics.median(medians)
        spread = (max(medians) - min(medians)) / value if value > 0 else 0.0
        counters = {k: statistics.median(v) for k, v in c["counters"].items()}
        counters["round_min"], counters["round_max"] = min(medians), max(medians)
        # slowest / fastest round median (target P7, docs/contract.md), beside the counters
        counters["round_ratio"] = max(medians) / min(medians) if min(medians) > 0 else 0.0
        out[name] = (value, spread, counters)
    return out


def eco(summary, queue, runtime, impl, topo):
    rt = "threads" if impl in THREAD_IMPLS else runtime
    return summary.get(f"ecosystem/{queue}/{rt}/{impl}/{topo}")


def fmt_ms(entry):
    if entry is None:
        return "—"
    value, spread, _ = entry
    return f"{value:.3f} ({spread * 100:.0f}%)"


def ecosystem_rows(summary):
    """One dict per table row, with the ratio computed before rounding."""
    rows = []
    for q in QUEUES:
        for rt in RUNTIMES:
            for t in TOPOLOGIES:
                cells = {impl: eco(summary, q, rt, impl, t) for impl in COLUMNS}
                if all(v is None for v in cells.values()):
                    continue
                peers = {i: v for i, v in cells.items()
                         if v is not None and not i.startswith("cochan")}
                best = min(peers.items(), key=lambda kv: kv[1][0]) if peers else None
                ours_impl = "cochan_spmc" if t.startswith("1p") else "cochan_mpmc"
                ours = cells.get(ours_impl)
                ratio = ours[0] / best[1][0] if (ours and best) else None
                rows.append({"queue": q, "runtime": rt, "topology": t, "cells": cells,
                             "best": best, "ours_impl": ours_impl, "ratio": ratio})
    return rows


def table_ecosystem(rows, summary):
    head = ["queue", "runtime", "topology", "cochan SPMC", "cochan MPMC", "SPMC posted ‡",
            "SPMC runtime", "SPMC plain", "Asio",
            "Boost.Fiber", "async-channel", "flume", "Go chan",
            "moodycamel †", "mutex+cv deque †", "cochan blocking †", "fastest peer", "ratio",
            "vs limit"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        limit = summary.get(f"ecosystem/{r['queue']}/current/limit/1p1c")
        ours = r["cells"].get(r["ours_impl"])
        vs_limit = (f"{ours[0] / limit[0]:.1f}x"
                    if (r["runtime"] == "current" and ours and limit) else "")
        ratio = "—" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        if r["ours_impl"] == "cochan_mpmc" and r["ratio"] is not None:
            ratio += " (MPMC)"
        best = r["best"][0] if r["best"] else "—"
        cells = [fmt_ms(r["cells"][i]) for i in COLUMNS]
        lines.append("| " + " | ".join([r["queue"], r["runtime"], r["topology"], *cells, best,
                                        ratio, vs_limit]) + " |")
    return "\n".join(lines)


def table_parallelism(summary):
    """consumer threads / CPU per wall for each coroutine case (Go cannot tell its threads)."""
    impls = COCHAN + [POSTED, RUNTIME, PLAIN] + RUNTIME_PEERS
    head = ["queue", "runtime", "topology"] + [i for i in impls]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for q in QUEUES:
        for rt in ["mt2", "mt4"]:
            for t in TOPOLOGIES:
                cells = []
                for i in impls:
                    e = eco(summary, q, rt, i, t)
                    if e is None:
                        cells.append("—")
                    else:
                        c = e[2]
                        cpu = f"{c.get('cpu_per_wall', 0):.2f} cpu"
                        cells.append(f"{c['consumer_threads']:.1f} thr, {cpu}"
                                     if "consumer_threads" in c else cpu)
                lines.append("| " + " | ".join([q, rt, t, *cells]) + " |")
    return "\n".join(lines)


def table_threads(summary):
    """The OS-thread peers' own counters, for completeness."""
    head = ["queue", "topology"] + THREAD_IMPLS
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for q in QUEUES:
        for t in TOPOLOGIES:
            cells = []
            for i in THREAD_IMPLS:
                e = summary.get(f"ecosystem/{q}/threads/{i}/{t}")
                cells.append("—" if e is None else f"{e[2].get('cpu_per_wall', 0):.2f} cpu")
            lines.append("| " + " | ".join([q, t, *cells]) + " |")
    return "\n".join(lines)


def table_micro(summary):
    lines = ["| operation | ns per iteration | spread |", "|---|---|---|"]
    for name in sorted(n for n in summary if n.startswith("micro/")):
        value, spread, _ = summary[name]
        lines.append(f"| `{name[len('micro/'):]}` | {value * 1e6:.1f} | {spread * 100:.0f}% |")
    return "\n".join(lines)


# ---- Beside the ecosystem workload: recv_many, select, rendezvous (benchmarks/README.md) -------

RECV_MANY_RUNTIMES = ["current", "current_posted", "threads"]
SELECT_RUNTIMES = RUNTIMES
SELECT_SHAPES = ["2ch1c", "4ch1c", "2ch4c", "4ch4c"]
RENDEZVOUS_ROWS = ["current", "mt2", "threads"]
RENDEZVOUS_IMPLS = ["cochan_spmc", "cochan_mpmc", "cochan_blocking", "go_chan"]
VALUES = 16384  # values per batch
HANDOFFS = 2 * VALUES  # rendezvous: each value goes there and back


def fmt_rate(entry):
    """Million values per second from ms per batch, with the spread of the round medians."""
    if entry is None:
        return "—"
    value, spread, _ = entry
    return f"{VALUES / (value * 1e-3) / 1e6:.1f} ({spread * 100:.0f}%)"


def table_recv_many(summary):
    head = ["queue", "runtime", "channel", "recv (M values/s)", "recv_many(64) (M values/s)",
            "recv_many / recv"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for q in QUEUES:
        for rt in RECV_MANY_RUNTIMES:
            for kind in COCHAN:
                one = summary.get(f"recv_many/{q}/{rt}/{kind}/recv")
                many = summary.get(f"recv_many/{q}/{rt}/{kind}/recv_many64")
                if one is None and many is None:
                    continue
                ratio = f"{one[0] / many[0]:.2f}x" if (one and many) else "—"
                lines.append("| " + " | ".join([q, rt, kind, fmt_rate(one), fmt_rate(many),
                                                ratio]) + " |")
    return "\n".join(lines) if len(lines) > 2 else ""


def table_select(summary):
    head = ["runtime", "channels", "consumers", "cochan MPMC select", "Go select", "cochan / Go"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for rt in SELECT_RUNTIMES:
        for shape in SELECT_SHAPES:
            ours = summary.get(f"select/bounded/{rt}/cochan_mpmc/{shape}")
            go = summary.get(f"select/bounded/{rt}/go_chan/{shape}")
            if ours is None and go is None:
                continue
            ratio = f"{ours[0] / go[0]:.2f}x" if (ours and go) else "—"
            n, c = shape[:-1].split("ch")
            lines.append("| " + " | ".join([rt, n, c, fmt_ms(ours), fmt_ms(go), ratio]) + " |")
    return "\n".join(lines) if len(lines) > 2 else ""


def fmt_handoff(entry):
    if entry is None:
        return "—"
    value, spread, _ = entry
    return f"{value * 1e6 / HANDOFFS:.0f} ({spread * 100:.0f}%)"


def table_rendezvous(summary):
    head = ["runtime", "cochan SPMC", "cochan MPMC", "cochan blocking (2 threads)", "Go unbuffered",
            "fastest cochan / Go"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    go_mt2 = summary.get("rendezvous/mt2/go_chan/pingpong")
    for rt in RENDEZVOUS_ROWS:
        cells = {i: summary.get(f"rendezvous/{rt}/{i}/pingpong") for i in RENDEZVOUS_IMPLS}
        if all(v is None for v in cells.values()):
            continue
        ours = [v for i, v in cells.items() if i != "go_chan" and v is not None]
        go, note = cells["go_chan"], ""
        if rt == "threads" and go is None and go_mt2 is not None:
            go, note = go_mt2, " (vs Go mt2)"
        ratio = (f"{min(v[0] for v in ours) / go[0]:.2f}x{note}" if (ours and go) else "—")
        lines.append("| " + " | ".join([rt] + [fmt_handoff(cells[i]) for i in RENDEZVOUS_IMPLS]
                                       + [ratio]) + " |")
    return "\n".join(lines) if len(lines) > 2 else ""


# ---- Work distribution (workdist/, benchmarks/README.md "Work distribution") ------------------

WORKDIST_COUNTERS = ("ideal_ms", "control_ms", "vs_control")
# The table's order; async_channel, flume and go_chan are for Rust and Go peers not written yet.
WORKDIST_SETUPS = ["cochan_plain", "cochan_scope", "cochan_resume_on", "cochan_runtime",
                   "fiber_shared_work", "fiber_work_stealing", "async_channel", "flume",
                   "go_chan", "moodycamel", "mutex_deque"]


def table_workdist(summary):
    """One row per case and setup: workdist/<queue>/p<P>/<setup>/c<C>/w<W>."""
    found = {}
    for name, entry in summary.items():
        m = re.match(r"workdist/(\w+)/p(\d+)/(\w+)/c(\d+)/w(\d+)$", name)
        if m:
            q, p, setup, c, w = m.groups()
            found[(int(w), int(p), QUEUES.index(q), int(c), setup)] = (q, entry)
    if not found:
        return ""
    order = {s: i for i, s in enumerate(WORKDIST_SETUPS)}
    head = ["W µs", "P", "queue", "C", "setup", "wall ms (min–max)", "control ms", "vs N·W/P",
            "vs control", "threads", "cpu/wall"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in sorted(found, key=lambda k: (*k[:4], order.get(k[4], len(order)), k[4])):
        w, p, _, c, setup = key
        q, (value, _, cnt) = found[key]
        ideal = cnt.get("ideal_ms")
        cells = [str(w), str(p), q, str(c), setup,
                 f"{value:.1f} ({cnt['round_min']:.1f}–{cnt['round_max']:.1f})",
                 f"{cnt['control_ms']:.1f}" if "control_ms" in cnt else "—",
                 f"{ideal / value:.2f}" if ideal else "—",
                 f"{cnt['vs_control']:.2f}" if "vs_control" in cnt else "—",
                 f"{cnt['consumer_threads']:.1f}" if "consumer_threads" in cnt else "—",
                 f"{cnt['cpu_per_wall']:.2f}" if "cpu_per_wall" in cnt else "—"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def beyond(summary):
    """The three tables of the cases beside the ecosystem workload, those that have data."""
    parts = []
    t = table_recv_many(summary)
    if t:
        parts.append("### recv_many(64) against recv(): million values per second (higher is "
                     "better)\n\nOne producer, one consumer, 16,384 values per batch; "
                     "recv_many / recv > 1 means recv_many moves more values per second.\n\n" + t)
    t = table_select(summary)
    if t:
        parts.append("### select over 2 and 4 bounded channels: ms per batch of 16,384 values "
                     "(lower is better)\n\nOne producer per channel, C consumers selecting over "
                     "every channel until all are closed and drained; cochan / Go > 1 means Go is "
                     "faster.\n\n" + t)
    t = table_workdist(summary)
    if t:
        parts.append("### Work distribution: one producer, C consumers burning W µs per value on "
                     "P threads\n\n"
                     "wall: median of the round medians (lowest and highest round median); "
                     "control: P OS threads doing the same work with no channel, run before each "
                     "sample; vs N·W/P = N·W/P / wall; vs control = control wall / wall (1.00: "
                     "the setup got all the machine gave the control); threads: distinct threads "
                     "that ran consumer code per sample; cpu/wall: process CPU time / wall time "
                     "(the control's excluded). moodycamel and mutex_deque run C + 1 OS threads "
                     "whatever P (listed on the P = all-cores rows).\n\n" + t)
    t = table_rendezvous(summary)
    if t:
        parts.append("### Rendezvous ping-pong: ns per hand-off (lower is better)\n\n"
                     "Two tasks bounce 16,384 values over two capacity-0 channels (32,768 "
                     "hand-offs per batch); Go: unbuffered channels with GOMAXPROCS 1 (current) "
                     "or 2 (mt2); the threads row is compared with Go mt2.\n\n" + t)
    return parts


def targets(rows, summary):
    """The performance targets of docs/contract.md, checked against this run (informative:
    nothing is asserted)."""
    out = []
    ratios = [r for r in rows if r["ratio"] is not None and r["topology"].startswith("1p")]
    met = [r for r in ratios if r["ratio"] <= 0.5]
    worst = max(ratios, key=lambda r: r["ratio"]) if ratios else None
    if worst:
        ahead = [r for r in ratios if r["ratio"] < 1.0]
        out.append(f"- no peer faster than cochan SPMC: {len(ahead)} of "
                   f"{len(ratios)} 1P rows with ratio < 1 (ratios {min(r['ratio'] for r in ratios):.2f}"
                   f"-{worst['ratio']:.2f}x; a ratio inside the spreads is a tie, not a win).")
        out.append(f"- SPMC ≤ 0.5x the fastest peer: {len(met)} of {len(ratios)} 1P rows; worst "
                   f"{worst['queue']}/{worst['runtime']}/{worst['topology']} at "
                   f"{worst['ratio']:.2f}x (vs {worst['best'][0]}).")
    def over_limit(limit_impl):
        """cochan SPMC / the limit row, on the current rows."""
        out = []
        for r in ratios:
            limit = summary.get(f"ecosystem/{r['queue']}/current/{limit_impl}/1p1c")
            ours = r["cells"].get("cochan_spmc")
            if r["runtime"] == "current" and limit and ours:
                out.append(ours[0] / limit[0])
        return out

    cur = over_limit("limit")
    if cur:
        out.append(f"- current rows within 3x of `limit`: {sum(x <= 3 for x in cur)} of {len(cur)}"
                   f" (SPMC/limit from {min(cur):.1f}x to {max(cur):.1f}x).")
    mc = over_limit("limit_moodycamel")
    if mc:
        out.append(f"- current rows ≤ 1.5x the single-thread limit (moodycamel on one "
                   f"thread, `limit_moodycamel`): {sum(x <= 1.5 for x in mc)} of {len(mc)} "
                   f"(SPMC/limit_moodycamel from {min(mc):.2f}x to {max(mc):.2f}x).")
    micro = {n: v[0] * 1e6 for n, v in summary.items() if n.startswith("micro/")}
    tp = [v for n, v in micro.items() if "/try_pair/" in n]
    ho = [v for n, v in micro.items() if "/handoff/" in n]
    if tp:
        floor = micro.get("micro/lock_pair_baseline")
        out.append(f"- uncontended try_send+try_recv < 10 ns: {max(tp):.1f} ns at worst"
                   + (f" (two empty sections of the channel's lock alone, `lock_pair_baseline`: "
                      f"{floor:.1f} ns)" if floor is not None else "") + ".")
    if ho:
        out.append(f"- suspend/resume hand-off < 50 ns: {max(ho):.1f} ns at worst.")
    mt = [(e[2]["round_ratio"], f"{q}/{rt}/{t}")
          for q in QUEUES for rt in RUNTIMES if rt != "current" for t in TOPOLOGIES
          if t.startswith("1p") and (e := eco(summary, q, rt, "cochan_spmc", t)) is not None]
    if mt:
        w = max(mt)
        out.append(f"- slowest / fastest round median < 1.5 on the multi-threaded SPMC rows: "
                   f"{sum(x < 1.5 for x, _ in mt)} of {len(mt)}; worst {w[1]} at {w[0]:.2f}.")
    mp = []
    for r in ratios:
        s, m = r["cells"].get("cochan_spmc"), r["cells"].get("cochan_mpmc")
        if s and m:
            mp.append((m[0] / s[0], r))
    if mp:
        worst_mp = max(mp, key=lambda x: x[0])
        out.append(f"- MPMC within 1.2x of SPMC on 1P rows: {sum(x <= 1.2 for x, _ in mp)} of "
                   f"{len(mp)}; worst {worst_mp[1]['queue']}/{worst_mp[1]['runtime']}/"
                   f"{worst_mp[1]['topology']} at {worst_mp[0]:.2f}x.")
    growth = []
    for q in QUEUES:
        for rt in RUNTIMES:
            one = eco(summary, q, rt, "cochan_spmc", "1p1c")
            eight = eco(summary, q, rt, "cochan_spmc", "1p8c")
            if one and eight:
                growth.append((eight[0] / one[0], f"{q}/{rt}"))
    if growth:
        g = max(growth)
        met = sum(x <= 2 for x, _ in growth)
        out.append(f"- SPMC 1C→8C growth ≤ 2x: {met} of {len(growth)} runtime rows; worst "
                   f"{g[1]} at {g[0]:.2f}x.")
    return "\n".join(out)


# The Asio adapter against Asio's own channel, per flavour: (channel impl, adapter impl, label).
ADAPTER_FLAVOURS = [("asio", "cochan_asio", "Asio 1.22"),
                    ("boost_asio", "cochan_boost_asio", "Boost.Asio 1.81")]


def table_adapter(summary, before=None):
    """cochan through the Asio adapter beside Asio's channel, 1P rows, each flavour; with
    `before` (another run's summary), that run's adapter time and ratio too. ratio = cochan
    through the adapter / Asio's channel of the same run."""
    head = ["queue", "runtime", "topology"]
    for _, _, label in ADAPTER_FLAVOURS:
        head += [f"{label} channel", f"cochan ({label})", "ratio"]
        if before:
            head[-2:-2] = [f"before: cochan ({label})", "before: ratio"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    found = False
    for q in QUEUES:
        for rt in RUNTIMES:
            for t in TOPOLOGIES:
                if not t.startswith("1p"):
                    continue
                row = [q, rt, t]
                for chan, ours, _ in ADAPTER_FLAVOURS:
                    c, o = eco(summary, q, rt, chan, t), eco(summary, q, rt, ours, t)
                    row.append(fmt_ms(c))
                    if before:
                        bc, bo = eco(before, q, rt, chan, t), eco(before, q, rt, ours, t)
                        row += [fmt_ms(bo), f"{bo[0] / bc[0]:.2f}x" if bc and bo else "—"]
                    row += [fmt_ms(o), f"{o[0] / c[0]:.2f}x" if c and o else "—"]
                    found = found or o is not None
                lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) if found else ""


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


def peer_versions(results_dir):
    """benchmarks/peers/build.sh's versions.txt, copied into the results by run.sh."""
    path = os.path.join(results_dir, "peers-versions.txt")
    if not os.path.exists(path):
        return ""
    with open(path) as f:
        names = [line.strip() for line in f if line.strip()]
    return ", ".join(names)


def machine(compiler, results_dir):
    cpu = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip() or platform.processor()
    pkgs = []
    for p in ["libbenchmark-dev", "libasio-dev", "libboost-fiber1.81-dev", "libconcurrentqueue-dev"]:
        v = sh(f"dpkg-query -W -f='${{Version}}' {p} 2>/dev/null")
        pkgs.append(f"{p} {v or '?'}")
    cc = sh(f"{compiler} --version | head -1") if compiler else "?"
    recorded = os.path.join(results_dir, "revision.txt")  # run.sh: the revision it built
    if os.path.exists(recorded):
        with open(recorded, encoding="utf-8") as f:
            rev = f.read().strip()
    else:  # an older results directory: the checkout now, which may have moved on since
        rev = sh("git rev-parse --short HEAD 2>/dev/null") or "?"
        dirty = sh("git status --porcelain -- include 2>/dev/null")
        rev += " with uncommitted changes under include/" if dirty else ""
    return (f"- CPU: {cpu}, {os.cpu_count()} logical cores (shared, noisy machine)\n"
            f"- Kernel: Linux {platform.release()}; {sh('. /etc/os-release; echo $PRETTY_NAME')}\n"
            f"- Compiler: {cc}, Release (-O3 -DNDEBUG)\n"
            f"- Packages: {', '.join(pkgs)}\n"
            f"- Rust and Go peers: {peer_versions(results_dir) or 'not built'}\n"
            f"- cochan: {rev}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results")
    ap.add_argument("--readme")
    ap.add_argument("--settings", default="")
    ap.add_argument("--compiler", default="")
    ap.add_argument("--adapter-before", metavar="DIR",
                    help="print only the Asio adapter table, with DIR's run as 'before'")
    args = ap.parse_args()

    cases, errors, rounds = load(args.results)
    if errors:
        print("report.py: cases that reported an error:\n  " + "\n  ".join(errors), file=sys.stderr)
        sys.exit(1)
    summary = summarise(cases)
    if args.adapter_before:
        before = summarise(load(args.adapter_before)[0])
        print(table_adapter(summary, before))
        return
    rows = ecosystem_rows(summary)
    def limit_times(impl):
        """The limit row's time per queue, as the description of the table gives it."""
        names = {q: f"ecosystem/{q}/current/{impl}/1p1c" for q in QUEUES}
        return ", ".join(f"{q} {summary[n][0]:.3f} ms" for q, n in names.items() if n in summary)

    limits = limit_times("limit")
    mc_limits = limit_times("limit_moodycamel")

    text = "\n\n".join([
        f"Measured {sh('date -u +%Y-%m-%d')} by `benchmarks/run.sh` ({args.settings}).",
        machine(args.compiler, args.results),
        "### Ecosystem: ms per batch of 16,384 values (lower is better)\n\n"
        "Each cell: median of the round medians, (min–max spread of the round medians). "
        "† runs on its own OS threads (1 per producer and consumer), whatever the runtime row: "
        "the same measurement is repeated in the current/mt2/mt4 rows. cochan SPMC/MPMC: tasks "
        "resumed in `cochan::resumption_scope`s, default resumption. ‡ cochan SPMC with "
        "`.resume_on(loop)` (current) or `.resume_on(pool)` (mt) on every operation instead "
        "(not in the ratio). "
        "async-channel and flume run on Tokio (current-thread runtime; multi-thread with 2 or 4 "
        "workers), Go chan with GOMAXPROCS 1, 2 or 4; Go has no unbounded channel, so its "
        "unbounded rows use capacity 16,384 (as Asio's use 16,384 + C). "
        "ratio = cochan SPMC "
        "(MPMC on 8P rows) / fastest peer; vs limit = the same over the `limit` row "
        f"({limits})"
        + (f"; the single-thread limit, `limit_moodycamel` (moodycamel's "
           f"ConcurrentQueue filled and drained on one thread): {mc_limits}" if mc_limits else "")
        + ".\n\n" + table_ecosystem(rows, summary),
        "### Performance targets in this run\n\n" + targets(rows, summary),
        *(["### cochan through the Asio adapter beside Asio's channel: ms per batch\n\n"
           "`use_awaitable` on both sides, 1 producer; ratio = cochan / Asio's channel (target: "
           "≤ 0.5x).\n\n" + table_adapter(summary)] if table_adapter(summary)
          else []),
        "### Parallelism of the mt rows\n\n"
        "Distinct threads that ran consumer code per sample (mean), and process CPU time / wall "
        "time over the timed region (2.0 = both cores busy).\n\n" + table_parallelism(summary),
        "### OS-thread peers: CPU time / wall time\n\n" + table_threads(summary),
        "### Micro: one operation, ns per iteration\n\n" + table_micro(summary),
        *beyond(summary),
    ])

    if args.readme:
        with open(args.readme) as f:
            readme = f.read()
        if BEGIN not in readme or END not in readme:
            sys.exit(f"report.py: {args.readme} lacks the {BEGIN} ... {END} markers")
        head, rest = readme.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        with open(args.readme, "w") as f:
            f.write(head + BEGIN + "\n" + text + "\n" + END + tail)
        print(f"report.py: wrote {len(summary)} cases from {rounds} round(s) into {args.readme}")
    print(text)


if __name__ == "__main__":
    main()
