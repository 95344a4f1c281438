//! What every Rust case shares: the workload's numbers, a per-consumer tally with its check, the
//! sample's completion signal, and the timing loop that turns samples into Google Benchmark's
//! repetitions and JSON. It mirrors benchmarks/common/harness.hpp (the C++ side) so that
//! benchmarks/report.py treats both alike; see benchmarks/README.md for the method.

use std::ffi::CString;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::runtime::Runtime;
use tokio::sync::Notify;

// ---- The workload ------------------------------------------------------------------------------

/// Values moved per sample (benchmarks/README.md, "The workload"): 1..=TOTAL_VALUES.
pub const TOTAL_VALUES: u64 = 16384;
/// Capacity of the bounded rows.
pub const BOUNDED_CAPACITY: usize = 64;
/// The checksum of one sample: every value received once.
pub const EXPECTED_SUM: u64 = TOTAL_VALUES * (TOTAL_VALUES + 1) / 2;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Queue {
    Bounded,
    Unbounded,
}

impl Queue {
    pub const ALL: [Queue; 2] = [Queue::Bounded, Queue::Unbounded];

    pub fn name(self) -> &'static str {
        match self {
            Queue::Bounded => "bounded",
            Queue::Unbounded => "unbounded",
        }
    }
}

/// P producers, C consumers; producer p sends the values first(p)+1 ..= last(p).
#[derive(Clone, Copy)]
pub struct Topology {
    pub producers: u64,
    pub consumers: u64,
}

impl Topology {
    /// The ecosystem table's topologies: asyncband's 1P/{1,2,4,8}C and MPMC's 8P/1C and 8P/8C.
    pub const ALL: [Topology; 6] = [
        Topology { producers: 1, consumers: 1 },
        Topology { producers: 1, consumers: 2 },
        Topology { producers: 1, consumers: 4 },
        Topology { producers: 1, consumers: 8 },
        Topology { producers: 8, consumers: 1 },
        Topology { producers: 8, consumers: 8 },
    ];

    pub fn name(&self) -> String {
        format!("{}p{}c", self.producers, self.consumers)
    }
    pub fn first(&self, p: u64) -> u64 {
        TOTAL_VALUES * p / self.producers
    }
    pub fn last(&self, p: u64) -> u64 {
        TOTAL_VALUES * (p + 1) / self.producers
    }
}

/// A runtime row: `current` (Tokio's current-thread runtime, workers == 0) or `mt<W>` (Tokio's
/// multi-thread runtime with W worker threads).
#[derive(Clone, Copy)]
pub struct RuntimeRow {
    pub name: &'static str,
    pub workers: usize,
}

pub const RUNTIME_ROWS: [RuntimeRow; 3] = [
    RuntimeRow { name: "current", workers: 0 },
    RuntimeRow { name: "mt2", workers: 2 },
    RuntimeRow { name: "mt4", workers: 4 },
];

/// One registered case: `ecosystem/<queue>/<runtime>/<implementation>/<topology>`.
#[derive(Clone, Copy)]
pub struct Spec {
    pub implementation: &'static str,
    pub queue: Queue,
    pub runtime: RuntimeRow,
    pub topology: Topology,
}

impl Spec {
    /// The name as Google Benchmark writes it for a manual-time benchmark, suffix included, so
    /// that --benchmark_filter sees the same string in every binary.
    pub fn name(&self) -> String {
        format!(
            "ecosystem/{}/{}/{}/{}/manual_time",
            self.queue.name(),
            self.runtime.name,
            self.implementation,
            self.topology.name()
        )
    }
}

// ---- What consumers received -------------------------------------------------------------------

/// One consumer's count and checksum, and the distinct threads its code ran on. Kept by the
/// consumer task itself and stored into the sample once, when it is done.
#[derive(Clone, Default)]
pub struct Tally {
    pub count: u64,
    pub sum: u64,
    last_thread: libc::pthread_t,
    threads: [libc::pthread_t; 16], // more than 16 are not told apart
    distinct: usize,
}

impl Tally {
    #[inline]
    pub fn add(&mut self, v: u64) {
        self.count += 1;
        self.sum += v;
        // As the C++ tally: one pthread_self() per value, the common case one compare.
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() };
        if me != self.last_thread {
            self.note_thread(me);
        }
    }

    #[cold]
    fn note_thread(&mut self, me: libc::pthread_t) {
        self.last_thread = me;
        if !self.threads[..self.distinct].contains(&me) && self.distinct < self.threads.len() {
            self.threads[self.distinct] = me;
            self.distinct += 1;
        }
    }
}

/// One sample's shared state: its tallies, and the count of tasks still running with the
/// notification that the benchmark thread waits on.
pub struct Sample {
    left: AtomicUsize,
    done: Notify,
    tallies: Vec<Mutex<Tally>>,
}

impl Sample {
    pub fn new(topology: &Topology) -> Arc<Sample> {
        Arc::new(Sample {
            left: AtomicUsize::new((topology.producers + topology.consumers) as usize),
            done: Notify::new(),
            tallies: (0..topology.consumers).map(|_| Mutex::new(Tally::default())).collect(),
        })
    }

    /// A consumer's last word: what it received.
    pub fn store(&self, consumer: usize, tally: Tally) {
        *self.tallies[consumer].lock().unwrap() = tally;
    }

    /// A task's last action. AcqRel: the waiter's Acquire sees every task's tally.
    pub fn finish(&self) {
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            // notify_one keeps a permit when nobody waits yet, so the wake-up cannot be lost.
            self.done.notify_one();
        }
    }

    /// Returns once every task has finished (run by block_on on the benchmark thread).
    pub async fn wait(&self) {
        while self.left.load(Ordering::Acquire) != 0 {
            self.done.notified().await;
        }
    }

    /// Empty when every value arrived exactly once (by count and sum); otherwise what is wrong.
    fn check(&self) -> Result<(), String> {
        let (mut count, mut sum) = (0u64, 0u64);
        for t in &self.tallies {
            let t = t.lock().unwrap();
            count += t.count;
            sum = sum.wrapping_add(t.sum);
        }
        if count == TOTAL_VALUES && sum == EXPECTED_SUM {
            return Ok(());
        }
        Err(format!(
            "checksum mismatch: received {count} values (expected {TOTAL_VALUES}), sum {sum} \
             (expected {EXPECTED_SUM})"
        ))
    }

    /// How many distinct threads ran consumer code in this sample.
    fn consumer_threads(&self) -> usize {
        let mut seen: Vec<libc::pthread_t> = Vec::new();
        for t in &self.tallies {
            let t = t.lock().unwrap();
            for id in &t.threads[..t.distinct] {
                if !seen.contains(id) {
                    seen.push(*id);
                }
            }
        }
        seen.len()
    }
}

// ---- A case ------------------------------------------------------------------------------------

/// One sample of one case, as the C++ cases: `prepare` outside the timed region (the channel and
/// the tasks' futures), `run` inside it (start the tasks, return when the benchmark thread has
/// learnt that the last one finished).
pub trait Case {
    fn prepare(&mut self, rt: &Runtime, sample: &Arc<Sample>);
    fn run(&mut self, rt: &Runtime, sample: &Arc<Sample>);
}

// ---- Clocks and the deadlock watchdog ---------------------------------------------------------

fn clock_seconds(clock: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec; both clocks exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn process_cpu_seconds() -> f64 {
    clock_seconds(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// Monotonic milliseconds at which the running sample counts as deadlocked (0: none running).
static DEADLINE_MS: AtomicU64 = AtomicU64::new(0);
const SAMPLE_TIMEOUT_MS: u64 = 60_000;

fn monotonic_ms() -> u64 {
    (clock_seconds(libc::CLOCK_MONOTONIC) * 1e3) as u64
}

/// The C++ completion waits 60 s and aborts; a Tokio block_on has no timeout without a time
/// driver, so a thread checks once a second instead (it sleeps otherwise).
pub fn start_watchdog() {
    std::thread::spawn(|| loop {
        std::thread::sleep(Duration::from_secs(1));
        let deadline = DEADLINE_MS.load(Ordering::Relaxed);
        if deadline != 0 && monotonic_ms() > deadline {
            eprintln!("rust peers: a sample ran for 60 s without completing: deadlock?");
            std::process::abort();
        }
    });
}

// ---- The timing loop ---------------------------------------------------------------------------

/// The command line, in Google Benchmark's spelling (`--flag=value`).
pub struct Options {
    pub filter: Filter,
    pub filter_text: String,
    pub min_time: f64,
    pub repetitions: u64,
    pub aggregates_only: bool,
    pub list_tests: bool,
    pub json: bool,
}

/// One run of `iterations` samples (one Google Benchmark "DoNIterations").
struct Run {
    iterations: u64,
    manual_seconds: f64,
    cpu_seconds: f64,
    threads_total: f64,
}

fn run_iterations(
    case: &mut dyn Case,
    rt: &Runtime,
    spec: &Spec,
    iterations: u64,
) -> Result<Run, String> {
    let mut run = Run { iterations, manual_seconds: 0.0, cpu_seconds: 0.0, threads_total: 0.0 };
    for _ in 0..iterations {
        let sample = Sample::new(&spec.topology);
        case.prepare(rt, &sample);
        DEADLINE_MS.store(monotonic_ms() + SAMPLE_TIMEOUT_MS, Ordering::Relaxed);
        let cpu0 = process_cpu_seconds();
        let t0 = Instant::now();
        case.run(rt, &sample);
        let wall = t0.elapsed().as_secs_f64();
        let cpu1 = process_cpu_seconds();
        DEADLINE_MS.store(0, Ordering::Relaxed);
        run.manual_seconds += wall;
        run.cpu_seconds += cpu1 - cpu0;
        run.threads_total += sample.consumer_threads() as f64;
        sample.check()?;
    }
    Ok(run)
}

/// Google Benchmark's cap on one run's iterations.
const MAX_ITERATIONS: u64 = 1_000_000_000;

/// Google Benchmark 1.7's rule for the first repetition: aim at 1.4x the minimum time, growing
/// the count at most tenfold while a run is under a tenth of it. Later repetitions reuse the
/// count the first one settled on.
fn next_iterations(run: &Run, min_time: f64) -> u64 {
    let significant = run.manual_seconds / min_time > 0.1;
    let multiplier = if significant { min_time * 1.4 / run.manual_seconds.max(1e-9) } else { 10.0 };
    let next = (multiplier * run.iterations as f64).max(run.iterations as f64 + 1.0).round();
    (next as u64).min(MAX_ITERATIONS)
}

/// All repetitions of one case, or the first sample's error.
fn measure(
    case: &mut dyn Case,
    rt: &Runtime,
    spec: &Spec,
    opts: &Options,
) -> Result<Vec<Run>, String> {
    let mut iterations = 1;
    let first = loop {
        let run = run_iterations(case, rt, spec, iterations)?;
        if run.manual_seconds >= opts.min_time || iterations >= MAX_ITERATIONS {
            break run;
        }
        iterations = next_iterations(&run, opts.min_time);
    };
    let mut runs = vec![first];
    for _ in 1..opts.repetitions {
        runs.push(run_iterations(case, rt, spec, iterations)?);
    }
    Ok(runs)
}

// ---- The report --------------------------------------------------------------------------------

pub fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_number(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "0".to_string()
    }
}

/// Collects the report's entries in Google Benchmark's JSON shape: one `iteration` entry per
/// repetition (what report.py reads), then the mean/median/stddev/cv aggregates Google Benchmark
/// adds when there is more than one repetition.
pub struct Report {
    entries: Vec<String>,
    family: usize,
    pub failed: bool,
}

impl Report {
    pub fn new() -> Report {
        Report { entries: Vec::new(), family: 0, failed: false }
    }

    fn entry(&mut self, name: &str, spec_name: &str, fields: &[(&str, String)]) {
        let mut e = format!(
            "{{\"name\": {}, \"family_index\": {}, \"per_family_instance_index\": 0, \
             \"run_name\": {}",
            json_string(name),
            self.family,
            json_string(spec_name)
        );
        for (k, v) in fields {
            e.push_str(&format!(", {}: {}", json_string(k), v));
        }
        e.push('}');
        self.entries.push(e);
    }

    /// Runs one case and records it. A failed check is recorded as Google Benchmark records a
    /// SkipWithError, and makes the process exit non-zero at the end.
    pub fn run_case(&mut self, case: &mut dyn Case, rt: &Runtime, spec: &Spec, opts: &Options) {
        let name = spec.name();
        match measure(case, rt, spec, opts) {
            Err(error) => {
                eprintln!("{name}: {error}");
                self.failed = true;
                self.entry(
                    &name,
                    &name,
                    &[
                        ("run_type", json_string("iteration")),
                        ("error_occurred", "true".to_string()),
                        ("error_message", json_string(&error)),
                    ],
                );
            }
            Ok(runs) => self.record(&name, &runs, opts),
        }
        self.family += 1;
    }

    fn record(&mut self, name: &str, runs: &[Run], opts: &Options) {
        let reps = runs.len();
        let ms = |s: f64, n: u64| s / n as f64 * 1e3;
        if !opts.json {
            for r in runs {
                println!(
                    "{name:<60} {:>10.3} ms {:>8} iterations",
                    ms(r.manual_seconds, r.iterations),
                    r.iterations
                );
            }
            return;
        }
        if !opts.aggregates_only {
            for (i, r) in runs.iter().enumerate() {
                self.entry(
                    name,
                    name,
                    &[
                        ("run_type", json_string("iteration")),
                        ("repetitions", reps.to_string()),
                        ("repetition_index", i.to_string()),
                        ("threads", "1".to_string()),
                        ("iterations", r.iterations.to_string()),
                        ("real_time", json_number(ms(r.manual_seconds, r.iterations))),
                        // Process CPU time over the timed regions (Google Benchmark's cpu_time
                        // is the benchmark thread's); report.py reads neither.
                        ("cpu_time", json_number(ms(r.cpu_seconds, r.iterations))),
                        ("time_unit", json_string("ms")),
                        ("consumer_threads", json_number(r.threads_total / r.iterations as f64)),
                        ("cpu_per_wall", json_number(r.cpu_seconds / r.manual_seconds)),
                    ],
                );
            }
        }
        if reps < 2 {
            return;
        }
        let real: Vec<f64> = runs.iter().map(|r| ms(r.manual_seconds, r.iterations)).collect();
        let cpu: Vec<f64> = runs.iter().map(|r| ms(r.cpu_seconds, r.iterations)).collect();
        for (aggregate, f) in [
            ("mean", mean as fn(&[f64]) -> f64),
            ("median", median),
            ("stddev", stddev),
            ("cv", cv),
        ] {
            self.entry(
                &format!("{name}_{aggregate}"),
                name,
                &[
                    ("run_type", json_string("aggregate")),
                    ("repetitions", reps.to_string()),
                    ("threads", "1".to_string()),
                    ("aggregate_name", json_string(aggregate)),
                    (
                        "aggregate_unit",
                        json_string(if aggregate == "cv" { "percentage" } else { "time" }),
                    ),
                    ("iterations", reps.to_string()),
                    ("real_time", json_number(f(&real))),
                    ("cpu_time", json_number(f(&cpu))),
                    ("time_unit", json_string("ms")),
                ],
            );
        }
    }

    /// The whole document: a context object (values given as JSON) and the `benchmarks` list.
    pub fn print(&self, context: &[(&str, String)]) {
        let ctx: Vec<String> =
            context.iter().map(|(k, v)| format!("    {}: {v}", json_string(k))).collect();
        println!("{{\n  \"context\": {{\n{}\n  }},", ctx.join(",\n"));
        println!("  \"benchmarks\": [\n    {}\n  ]\n}}", self.entries.join(",\n    "));
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

fn stddev(v: &[f64]) -> f64 {
    let m = mean(v);
    (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() as f64 - 1.0)).sqrt()
}

fn cv(v: &[f64]) -> f64 {
    stddev(v) / mean(v)
}

// ---- --benchmark_filter ------------------------------------------------------------------------

/// Google Benchmark's filter: a POSIX extended regular expression searched for anywhere in the
/// case name (glibc's regcomp/regexec, the same dialect its std::regex::extended speaks); a
/// leading '-' selects the cases that do not match; empty or "all" selects everything.
pub struct Filter {
    re: Option<Box<libc::regex_t>>,
    negate: bool,
}

impl Filter {
    pub fn new(pattern: &str) -> Result<Filter, String> {
        let (negate, pattern) = match pattern.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, pattern),
        };
        if pattern.is_empty() || pattern == "all" {
            return Ok(Filter { re: None, negate });
        }
        let c = CString::new(pattern).map_err(|_| "filter contains a NUL byte".to_string())?;
        let mut re: Box<MaybeUninit<libc::regex_t>> = Box::new(MaybeUninit::uninit());
        // SAFETY: regcomp initialises *re when it returns 0; otherwise it is never read.
        let rc = unsafe {
            libc::regcomp(re.as_mut_ptr(), c.as_ptr(), libc::REG_EXTENDED | libc::REG_NOSUB)
        };
        if rc != 0 {
            return Err(format!("invalid --benchmark_filter regex: {pattern}"));
        }
        // SAFETY: initialised by regcomp above; MaybeUninit<T> has T's layout.
        let re = unsafe { Box::from_raw(Box::into_raw(re).cast::<libc::regex_t>()) };
        Ok(Filter { re: Some(re), negate })
    }

    pub fn matches(&self, name: &str) -> bool {
        let hit = match &self.re {
            None => true,
            Some(re) => {
                let c = CString::new(name).expect("case names have no NUL");
                // SAFETY: re was compiled by regcomp; REG_NOSUB needs no match array.
                unsafe { libc::regexec(&**re, c.as_ptr(), 0, std::ptr::null_mut(), 0) == 0 }
            }
        };
        hit != self.negate
    }
}

impl Drop for Filter {
    fn drop(&mut self) {
        if let Some(re) = &mut self.re {
            // SAFETY: compiled by regcomp, freed once.
            unsafe { libc::regfree(&mut **re) };
        }
    }
}

/// Parses Google Benchmark's flags (those benchmarks/run.sh passes, and a few more).
pub fn parse_options(args: &[String]) -> Result<Options, String> {
    let mut opts = Options {
        filter: Filter::new("")?,
        filter_text: String::new(),
        min_time: 0.5,
        repetitions: 1,
        aggregates_only: false,
        list_tests: false,
        json: false,
    };
    for arg in args {
        let (flag, value) = match arg.split_once('=') {
            Some((f, v)) => (f, Some(v)),
            None => (arg.as_str(), None),
        };
        let bool_value = || !matches!(value, Some("false") | Some("0"));
        let value_of = || value.ok_or_else(|| format!("{flag} needs =VALUE"));
        match flag {
            "--benchmark_filter" => {
                opts.filter_text = value_of()?.to_string();
                opts.filter = Filter::new(&opts.filter_text)?;
            }
            "--benchmark_min_time" => {
                // Google Benchmark 1.8 also accepts a trailing "s".
                let v = value_of()?.trim_end_matches('s');
                opts.min_time = v.parse().map_err(|_| format!("bad {arg}"))?;
            }
            "--benchmark_repetitions" => {
                opts.repetitions = value_of()?.parse().map_err(|_| format!("bad {arg}"))?;
                opts.repetitions = opts.repetitions.max(1);
            }
            "--benchmark_report_aggregates_only" => opts.aggregates_only = bool_value(),
            "--benchmark_list_tests" => opts.list_tests = bool_value(),
            "--benchmark_format" => match value_of()? {
                "json" => opts.json = true,
                "console" => opts.json = false,
                other => return Err(format!("--benchmark_format={other}: json or console only")),
            },
            _ => return Err(format!("unrecognized command-line flag: {arg}")),
        }
    }
    Ok(opts)
}
