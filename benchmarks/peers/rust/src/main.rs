//! The ecosystem benchmark's Rust peers: `async-channel` and `flume` on Tokio, driven through the
//! ecosystem workload exactly as the C++ peers are (benchmarks/README.md, "Non-C++ peers").
//!
//! current: Tokio's current-thread runtime, driven by the benchmark thread. The tasks are
//!          spawned before the timed region (a spawn from outside the runtime only queues
//!          them); the timed region is `block_on` until the last task has finished, as Asio's
//!          `io_context::run()` in the C++ binary.
//! mt2/mt4: Tokio's multi-thread runtime with 2 or 4 worker threads. A spawn starts the task at
//!          once, so the timed region spawns them (as Asio's mt cases do) and then blocks on the
//!          completion signal.
//! Either way the tasks' futures (the analogue of the C++ coroutine frames) and the channel are
//! built before the timed region; each runtime is built once per process.
//!
//! Both libraries let receivers drain after the last sender is dropped, so consumers receive
//! until `Err` (disconnected and empty) and the producers' sender drop is the disconnection,
//! timed. Unbounded sends are synchronous (`try_send` / `send`), as cochan's unbounded `send`.

mod harness;

use std::future::Future;
use std::sync::Arc;

use harness::{Case, Queue, Sample, Spec, Tally, Topology, BOUNDED_CAPACITY, RUNTIME_ROWS};
use tokio::runtime::Runtime;

/// What one task of a sample does.
enum Role<Tx, Rx> {
    Produce { tx: Tx, first: u64, last: u64 },
    Consume { rx: Rx, index: usize },
}

// ---- async-channel -----------------------------------------------------------------------------

type AcTx = async_channel::Sender<u64>;
type AcRx = async_channel::Receiver<u64>;

/// One future type for producers and consumers, so a case can hold its tasks unboxed.
async fn async_channel_task(role: Role<AcTx, AcRx>, queue: Queue, sample: Arc<Sample>) {
    match role {
        Role::Produce { tx, first, last } => {
            for i in first..last {
                let sent = match queue {
                    Queue::Bounded => tx.send(i + 1).await.is_ok(),
                    // Unbounded: never full, so the synchronous try_send always completes.
                    Queue::Unbounded => tx.try_send(i + 1).is_ok(),
                };
                assert!(sent, "async-channel: send failed with receivers alive");
            }
            drop(tx); // the last sender's drop closes the channel: timed
        }
        Role::Consume { rx, index } => {
            let mut tally = Tally::default();
            while let Ok(v) = rx.recv().await {
                tally.add(v);
            }
            drop(rx);
            sample.store(index, tally);
        }
    }
    sample.finish();
}

fn async_channel_tasks(
    queue: Queue,
    topology: &Topology,
    sample: &Arc<Sample>,
) -> Vec<impl Future<Output = ()> + Send + 'static> {
    let (tx, rx) = match queue {
        Queue::Bounded => async_channel::bounded(BOUNDED_CAPACITY),
        Queue::Unbounded => async_channel::unbounded(),
    };
    tasks(tx, rx, topology, |role| async_channel_task(role, queue, sample.clone()))
}

// ---- flume -------------------------------------------------------------------------------------

type FlumeTx = flume::Sender<u64>;
type FlumeRx = flume::Receiver<u64>;

async fn flume_task(role: Role<FlumeTx, FlumeRx>, queue: Queue, sample: Arc<Sample>) {
    match role {
        Role::Produce { tx, first, last } => {
            for i in first..last {
                let sent = match queue {
                    Queue::Bounded => tx.send_async(i + 1).await.is_ok(),
                    // Unbounded: flume's synchronous send never blocks.
                    Queue::Unbounded => tx.send(i + 1).is_ok(),
                };
                assert!(sent, "flume: send failed with receivers alive");
            }
            drop(tx);
        }
        Role::Consume { rx, index } => {
            let mut tally = Tally::default();
            while let Ok(v) = rx.recv_async().await {
                tally.add(v);
            }
            drop(rx);
            sample.store(index, tally);
        }
    }
    sample.finish();
}

fn flume_tasks(
    queue: Queue,
    topology: &Topology,
    sample: &Arc<Sample>,
) -> Vec<impl Future<Output = ()> + Send + 'static> {
    let (tx, rx) = match queue {
        Queue::Bounded => flume::bounded(BOUNDED_CAPACITY),
        Queue::Unbounded => flume::unbounded(),
    };
    tasks(tx, rx, topology, |role| flume_task(role, queue, sample.clone()))
}

// ---- Shared by both ----------------------------------------------------------------------------

/// The sample's task futures, consumers first (so they are queued ahead of the producers, as in
/// every C++ peer). Every endpoint is moved into a task: the originals are dropped here.
fn tasks<Tx: Clone, Rx: Clone, F>(
    tx: Tx,
    rx: Rx,
    topology: &Topology,
    mut task: impl FnMut(Role<Tx, Rx>) -> F,
) -> Vec<F> {
    let mut out = Vec::with_capacity((topology.producers + topology.consumers) as usize);
    for index in 0..topology.consumers as usize {
        out.push(task(Role::Consume { rx: rx.clone(), index }));
    }
    drop(rx);
    for p in 0..topology.producers {
        let (first, last) = (topology.first(p), topology.last(p));
        out.push(task(Role::Produce { tx: tx.clone(), first, last }));
    }
    drop(tx);
    out
}

/// A case: `make` builds one sample's channel and task futures.
struct TaskCase<F, Make> {
    make: Make,
    /// The current-thread runtime: spawning only queues, so it happens in `prepare`.
    spawn_ahead: bool,
    pending: Vec<F>,
}

impl<F, Make> Case for TaskCase<F, Make>
where
    F: Future<Output = ()> + Send + 'static,
    Make: FnMut(&Arc<Sample>) -> Vec<F>,
{
    fn prepare(&mut self, rt: &Runtime, sample: &Arc<Sample>) {
        self.pending = (self.make)(sample);
        if self.spawn_ahead {
            for f in self.pending.drain(..) {
                drop(rt.spawn(f)); // detached: completion is the sample's count, not the handle
            }
        }
    }

    fn run(&mut self, rt: &Runtime, sample: &Arc<Sample>) {
        for f in self.pending.drain(..) {
            drop(rt.spawn(f));
        }
        rt.block_on(sample.wait());
    }
}

fn run_spec(report: &mut harness::Report, rt: &Runtime, spec: &Spec, opts: &harness::Options) {
    let (queue, topology, spawn_ahead) = (spec.queue, spec.topology, spec.runtime.workers == 0);
    match spec.implementation {
        "async_channel" => {
            let make = move |s: &Arc<Sample>| async_channel_tasks(queue, &topology, s);
            let mut case = TaskCase { make, spawn_ahead, pending: Vec::new() };
            report.run_case(&mut case, rt, spec, opts);
        }
        "flume" => {
            let make = move |s: &Arc<Sample>| flume_tasks(queue, &topology, s);
            let mut case = TaskCase { make, spawn_ahead, pending: Vec::new() };
            report.run_case(&mut case, rt, spec, opts);
        }
        other => unreachable!("unknown implementation {other}"),
    }
}

fn build_runtime(workers: usize) -> Runtime {
    let built = if workers == 0 {
        tokio::runtime::Builder::new_current_thread().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(workers).build()
    };
    built.expect("building a Tokio runtime")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match harness::parse_options(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("rust_peers: {e}");
            std::process::exit(2);
        }
    };

    // Registration order as in the C++ binary: implementation, queue, runtime, topology.
    let mut specs = Vec::new();
    for implementation in ["async_channel", "flume"] {
        for queue in Queue::ALL {
            for runtime in RUNTIME_ROWS {
                for topology in Topology::ALL {
                    let spec = Spec { implementation, queue, runtime, topology };
                    if opts.filter.matches(&spec.name()) {
                        specs.push(spec);
                    }
                }
            }
        }
    }
    if opts.list_tests {
        for s in &specs {
            println!("{}", s.name());
        }
        return;
    }
    if specs.is_empty() {
        // As Google Benchmark: a message, no report, exit status 0.
        eprintln!("Failed to match any benchmarks against regex: {}", opts.filter_text);
        return;
    }

    harness::start_watchdog();
    // One runtime per row, built when its first case runs and kept for the rest of the process
    // (never per sample). Only one runs cases at a time; the others' workers sleep.
    let mut runtimes: Vec<(usize, Runtime)> = Vec::new();
    let mut report = harness::Report::new();
    for spec in &specs {
        let w = spec.runtime.workers;
        if !runtimes.iter().any(|(k, _)| *k == w) {
            runtimes.push((w, build_runtime(w)));
        }
        let rt = &runtimes.iter().find(|(k, _)| *k == w).unwrap().1;
        run_spec(&mut report, rt, spec, &opts);
    }

    if opts.json {
        let exe = std::env::args().next().unwrap_or_default();
        let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
        report.print(&[
            ("executable", harness::json_string(&exe)),
            ("num_cpus", cpus.to_string()),
            ("peers", harness::json_string("async-channel, flume on Tokio")),
        ]);
    }
    if report.failed {
        eprintln!("FAILED: at least one sample failed its count/checksum check");
        std::process::exit(1);
    }
}
