// The ecosystem benchmark's Go peer (`go_chan`): a buffered Go channel between goroutines, driven
// through the ecosystem workload as the C++ peers are (benchmarks/README.md, "Non-C++ peers"), with
// Google Benchmark's flags, timing loop and JSON so that benchmarks/report.py reads it alike.
//
// Rows: `current` runs with GOMAXPROCS = 1 (one thread runs Go code: the scheduler is the event
// loop), `mt2`/`mt4` with GOMAXPROCS = 2 or 4. The Go scheduler is process-wide: it is set up
// once and only resized, outside every timed region, when the row changes.
//
// One sample: the channel is made before the timed region; the timed region starts the
// goroutines (a goroutine cannot be created without being started), then waits on a WaitGroup
// until the last one has finished. The last producer closes the channel; consumers `range` over
// it, which drains the buffer and stops at the close: disconnection is timed.
//
// Go has no unbounded channel: the unbounded rows use capacity 16,384, room for every value,
// so sends never wait (as Asio's and Boost.Fiber's unbounded rows in the C++ binary).
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ---- The workload -------------------------------------------------------------------------------

const (
	totalValues       = 16384 // values per sample, 1..totalValues (benchmarks/README.md, "The workload")
	boundedCapacity   = 64
	unboundedCapacity = totalValues
	expectedSum       = totalValues * (totalValues + 1) / 2
)

type queue struct {
	name     string
	capacity int
}

var queues = []queue{{"bounded", boundedCapacity}, {"unbounded", unboundedCapacity}}

type runtimeRow struct {
	name  string
	procs int // GOMAXPROCS
}

var runtimeRows = []runtimeRow{{"current", 1}, {"mt2", 2}, {"mt4", 4}}

// topology: P producers, C consumers; producer p sends first(p)+1 .. last(p).
type topology struct{ producers, consumers int }

func (t topology) name() string       { return fmt.Sprintf("%dp%dc", t.producers, t.consumers) }
func (t topology) first(p int) uint64 { return uint64(totalValues * p / t.producers) }
func (t topology) last(p int) uint64  { return uint64(totalValues * (p + 1) / t.producers) }

// The ecosystem table's topologies: asyncband's 1P/{1,2,4,8}C and MPMC's 8P/1C and 8P/8C.
var topologies = []topology{{1, 1}, {1, 2}, {1, 4}, {1, 8}, {8, 1}, {8, 8}}

type spec struct {
	q    queue
	rt   runtimeRow
	topo topology
}

// name: as Google Benchmark writes a manual-time case, suffix included, so that
// --benchmark_filter sees the same string in every binary.
func (s spec) name() string {
	return "ecosystem/" + s.q.name + "/" + s.rt.name + "/go_chan/" + s.topo.name() + "/manual_time"
}

// ---- One sample ---------------------------------------------------------------------------------

// tally: one consumer's count and checksum, written once by that consumer when it is done;
// padded to a cache line so consumers do not false-share.
type tally struct {
	count, sum uint64
	_          [48]byte
}

type sample struct {
	ch            chan uint64
	producersLeft int32
	done          sync.WaitGroup
	tallies       []tally
}

func produce(s *sample, first, last uint64) {
	ch := s.ch
	for i := first; i < last; i++ {
		ch <- i + 1
	}
	// The last producer closes; the atomic orders its close after every other producer's sends.
	if atomic.AddInt32(&s.producersLeft, -1) == 0 {
		close(ch)
	}
	s.done.Done()
}

func consume(s *sample, t *tally) {
	var count, sum uint64
	for v := range s.ch { // drains the buffer, then stops at the close
		count++
		sum += v
	}
	t.count, t.sum = count, sum
	s.done.Done() // publishes the tally to Wait
}

// newSample (untimed): the channel and the bookkeeping.
func newSample(sp spec, tallies []tally) *sample {
	s := &sample{ch: make(chan uint64, sp.q.capacity), producersLeft: int32(sp.topo.producers),
		tallies: tallies}
	s.done.Add(sp.topo.producers + sp.topo.consumers)
	return s
}

// benchCase: one registered case (the ecosystem's `spec`, and the cases of beyond.go): its name,
// its GOMAXPROCS, how many tallies a sample fills, and per sample an untimed prepare that
// returns the timed run.
type benchCase interface {
	name() string
	procs() int
	tallies() int
	prepare(tallies []tally) func()
}

func (sp spec) procs() int   { return sp.rt.procs }
func (sp spec) tallies() int { return sp.topo.consumers }
func (sp spec) prepare(tallies []tally) func() {
	s := newSample(sp, tallies)
	return func() { run(sp, s) }
}

// run (timed): start the goroutines, consumers first as in every C++ peer, and wait for all.
func run(sp spec, s *sample) {
	for c := 0; c < sp.topo.consumers; c++ {
		go consume(s, &s.tallies[c])
	}
	for p := 0; p < sp.topo.producers; p++ {
		go produce(s, sp.topo.first(p), sp.topo.last(p))
	}
	s.done.Wait()
}

func check(tallies []tally) error {
	var count, sum uint64
	for _, t := range tallies {
		count += t.count
		sum += t.sum
	}
	if count == totalValues && sum == expectedSum {
		return nil
	}
	return fmt.Errorf("checksum mismatch: received %d values (expected %d), sum %d (expected %d)",
		count, totalValues, sum, expectedSum)
}

// ---- Clocks, the collector and the deadlock watchdog -----------------------------------------

var processStart = time.Now()

func monotonicNow() int64 { return time.Since(processStart).Nanoseconds() }

// processCPUSeconds: user + system time of the whole process (every thread).
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)*1e-6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// The collector is switched off and run by hand every gcEverySamples samples, before the timed
// region: the garbage is the harness's own (a channel per sample, 128 KiB on the unbounded rows)
// and a few bytes per goroutine started, and a collection it triggered would otherwise run
// concurrently with timed regions.
const gcEverySamples = 64

var samplesSinceGC int

// The deadline (ns since processStart) after which the running sample counts as deadlocked; 0
// while none runs. The C++ completion waits 60 s and aborts; this goroutine does the same.
var deadline atomic.Int64

const sampleTimeout = 60 * time.Second

func watchdog() {
	for {
		time.Sleep(time.Second)
		if d := deadline.Load(); d != 0 && monotonicNow() > d {
			fmt.Fprintln(os.Stderr, "go peers: a sample ran for 60 s without completing: deadlock?")
			os.Exit(3)
		}
	}
}

// ---- The timing loop (Google Benchmark's) -------------------------------------------------------

type options struct {
	filter         *regexp.Regexp
	negate         bool
	filterText     string
	minTime        float64
	repetitions    int
	aggregatesOnly bool
	listTests      bool
	json           bool
}

// selected: whether --benchmark_filter picks the case named `name`.
func (o *options) selected(name string) bool {
	hit := o.filter == nil || o.filter.MatchString(name)
	return hit != o.negate
}

// runResult: one run of `iterations` samples (one Google Benchmark "DoNIterations").
type runResult struct {
	iterations    int64
	manualSeconds float64
	cpuSeconds    float64
}

func runIterations(sp benchCase, iterations int64) (runResult, error) {
	r := runResult{iterations: iterations}
	tallies := make([]tally, sp.tallies())
	for i := int64(0); i < iterations; i++ {
		if samplesSinceGC++; samplesSinceGC >= gcEverySamples {
			runtime.GC() // blocks until the cycle, sweep included, is complete
			samplesSinceGC = 0
		}
		for i := range tallies { // the check reads every tally: none may keep an old sample's
			tallies[i] = tally{}
		}
		timed := sp.prepare(tallies)
		deadline.Store(monotonicNow() + sampleTimeout.Nanoseconds())
		cpu0 := processCPUSeconds()
		t0 := time.Now()
		timed()
		wall := time.Since(t0).Seconds()
		cpu1 := processCPUSeconds()
		deadline.Store(0)
		r.manualSeconds += wall
		r.cpuSeconds += cpu1 - cpu0
		if err := check(tallies); err != nil {
			return r, err
		}
	}
	return r, nil
}

const maxIterations = 1_000_000_000 // Google Benchmark's cap

// nextIterations: Google Benchmark 1.7's rule for the first repetition: aim at 1.4x the minimum
// time, growing at most tenfold while a run is under a tenth of it. Later repetitions reuse
// the count the first one settled on.
func nextIterations(r runResult, minTime float64) int64 {
	multiplier := 10.0
	if r.manualSeconds/minTime > 0.1 {
		multiplier = minTime * 1.4 / math.Max(r.manualSeconds, 1e-9)
	}
	next := math.Round(math.Max(multiplier*float64(r.iterations), float64(r.iterations)+1))
	if next > maxIterations {
		return maxIterations
	}
	return int64(next)
}

func measure(sp benchCase, o *options) ([]runResult, error) {
	iterations := int64(1)
	var first runResult
	for {
		r, err := runIterations(sp, iterations)
		if err != nil {
			return nil, err
		}
		if r.manualSeconds >= o.minTime || iterations >= maxIterations {
			first = r
			break
		}
		iterations = nextIterations(r, o.minTime)
	}
	runs := []runResult{first}
	for len(runs) < o.repetitions {
		r, err := runIterations(sp, iterations)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// ---- The report (Google Benchmark's JSON) ------------------------------------------------------

type iterationEntry struct {
	Name                   string  `json:"name"`
	FamilyIndex            int     `json:"family_index"`
	PerFamilyInstanceIndex int     `json:"per_family_instance_index"`
	RunName                string  `json:"run_name"`
	RunType                string  `json:"run_type"`
	Repetitions            int     `json:"repetitions"`
	RepetitionIndex        int     `json:"repetition_index"`
	Threads                int     `json:"threads"`
	Iterations             int64   `json:"iterations"`
	RealTime               float64 `json:"real_time"`
	// Process CPU time over the timed regions (Google Benchmark's cpu_time is the benchmark
	// thread's); report.py reads neither.
	CPUTime    float64 `json:"cpu_time"`
	TimeUnit   string  `json:"time_unit"`
	CPUPerWall float64 `json:"cpu_per_wall"`
}

type aggregateEntry struct {
	Name                   string  `json:"name"`
	FamilyIndex            int     `json:"family_index"`
	PerFamilyInstanceIndex int     `json:"per_family_instance_index"`
	RunName                string  `json:"run_name"`
	RunType                string  `json:"run_type"`
	Repetitions            int     `json:"repetitions"`
	Threads                int     `json:"threads"`
	AggregateName          string  `json:"aggregate_name"`
	AggregateUnit          string  `json:"aggregate_unit"`
	Iterations             int     `json:"iterations"`
	RealTime               float64 `json:"real_time"`
	CPUTime                float64 `json:"cpu_time"`
	TimeUnit               string  `json:"time_unit"`
}

type errorEntry struct {
	Name          string `json:"name"`
	FamilyIndex   int    `json:"family_index"`
	RunName       string `json:"run_name"`
	RunType       string `json:"run_type"`
	ErrorOccurred bool   `json:"error_occurred"`
	ErrorMessage  string `json:"error_message"`
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func stddev(v []float64) float64 {
	m, s := mean(v), 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(v)-1))
}

func record(entries []any, family int, sp benchCase, runs []runResult, o *options) []any {
	name := sp.name()
	ms := func(seconds float64, n int64) float64 { return seconds / float64(n) * 1e3 }
	if !o.json {
		for _, r := range runs {
			fmt.Printf("%-60s %10.3f ms %8d iterations\n", name, ms(r.manualSeconds, r.iterations),
				r.iterations)
		}
		return entries
	}
	if !o.aggregatesOnly {
		for i, r := range runs {
			entries = append(entries, iterationEntry{
				Name: name, FamilyIndex: family, RunName: name, RunType: "iteration",
				Repetitions: len(runs), RepetitionIndex: i, Threads: 1, Iterations: r.iterations,
				RealTime: ms(r.manualSeconds, r.iterations), CPUTime: ms(r.cpuSeconds, r.iterations),
				TimeUnit: "ms", CPUPerWall: r.cpuSeconds / r.manualSeconds,
			})
		}
	}
	if len(runs) < 2 {
		return entries
	}
	var real, cpu []float64
	for _, r := range runs {
		real = append(real, ms(r.manualSeconds, r.iterations))
		cpu = append(cpu, ms(r.cpuSeconds, r.iterations))
	}
	cv := func(v []float64) float64 { return stddev(v) / mean(v) }
	for _, a := range []struct {
		name string
		f    func([]float64) float64
	}{{"mean", mean}, {"median", median}, {"stddev", stddev}, {"cv", cv}} {
		unit := "time"
		if a.name == "cv" {
			unit = "percentage"
		}
		entries = append(entries, aggregateEntry{
			Name: name + "_" + a.name, FamilyIndex: family, RunName: name, RunType: "aggregate",
			Repetitions: len(runs), Threads: 1, AggregateName: a.name, AggregateUnit: unit,
			Iterations: len(runs), RealTime: a.f(real), CPUTime: a.f(cpu), TimeUnit: "ms",
		})
	}
	return entries
}

// ---- The command line (Google Benchmark's flags) ----------------------------------------------

func parseOptions(args []string) (*options, error) {
	o := &options{minTime: 0.5, repetitions: 1}
	for _, arg := range args {
		flag, value, hasValue := strings.Cut(arg, "=")
		boolValue := !hasValue || (value != "false" && value != "0")
		need := func() error {
			if !hasValue {
				return fmt.Errorf("%s needs =VALUE", flag)
			}
			return nil
		}
		switch flag {
		case "--benchmark_filter":
			if err := need(); err != nil {
				return nil, err
			}
			// Google Benchmark's filter: a POSIX extended regex searched for anywhere in the
			// name; a leading '-' selects the cases that do not match; "" or "all": every case.
			o.filterText = value
			pattern := value
			o.negate = strings.HasPrefix(pattern, "-")
			pattern = strings.TrimPrefix(pattern, "-")
			o.filter = nil
			if pattern != "" && pattern != "all" {
				re, err := regexp.CompilePOSIX(pattern)
				if err != nil {
					return nil, fmt.Errorf("invalid --benchmark_filter regex: %v", err)
				}
				o.filter = re
			}
		case "--benchmark_min_time":
			if err := need(); err != nil {
				return nil, err
			}
			v, err := strconv.ParseFloat(strings.TrimSuffix(value, "s"), 64) // 1.8 allows "0.05s"
			if err != nil {
				return nil, fmt.Errorf("bad %s", arg)
			}
			o.minTime = v
		case "--benchmark_repetitions":
			if err := need(); err != nil {
				return nil, err
			}
			v, err := strconv.Atoi(value)
			if err != nil {
				return nil, fmt.Errorf("bad %s", arg)
			}
			if v < 1 {
				v = 1
			}
			o.repetitions = v
		case "--benchmark_report_aggregates_only":
			o.aggregatesOnly = boolValue
		case "--benchmark_list_tests":
			o.listTests = boolValue
		case "--benchmark_format":
			switch value {
			case "json":
				o.json = true
			case "console":
				o.json = false
			default:
				return nil, fmt.Errorf("--benchmark_format=%s: json or console only", value)
			}
		default:
			return nil, fmt.Errorf("unrecognized command-line flag: %s", arg)
		}
	}
	return o, nil
}

func main() {
	o, err := parseOptions(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "go_peers:", err)
		os.Exit(2)
	}
	// Registration order as in the C++ binary: queue, runtime, topology.
	var specs []benchCase
	for _, q := range queues {
		for _, rt := range runtimeRows {
			for _, t := range topologies {
				if sp := (spec{q, rt, t}); o.selected(sp.name()) {
					specs = append(specs, sp)
				}
			}
		}
	}
	// Then, as in the C++ binary, the cases beside the ecosystem workload (beyond.go).
	for _, c := range beyondCases() {
		if o.selected(c.name()) {
			specs = append(specs, c)
		}
	}
	if o.listTests {
		for _, sp := range specs {
			fmt.Println(sp.name())
		}
		return
	}
	if len(specs) == 0 {
		// As Google Benchmark: a message, no report, exit status 0.
		fmt.Fprintln(os.Stderr, "Failed to match any benchmarks against regex:", o.filterText)
		return
	}

	debug.SetGCPercent(-1)
	go watchdog()
	var entries []any
	failed := false
	for family, sp := range specs {
		if runtime.GOMAXPROCS(0) != sp.procs() {
			runtime.GOMAXPROCS(sp.procs())
		}
		runs, err := measure(sp, o)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", sp.name(), err)
			failed = true
			entries = append(entries, errorEntry{Name: sp.name(), FamilyIndex: family,
				RunName: sp.name(), RunType: "iteration", ErrorOccurred: true,
				ErrorMessage: err.Error()})
			continue
		}
		entries = record(entries, family, sp, runs, o)
	}

	if o.json {
		doc := map[string]any{
			"context": map[string]any{
				"executable": os.Args[0],
				"num_cpus":   runtime.NumCPU(),
				"go_version": runtime.Version(),
				"peers":      "Go channels (go_chan)",
			},
			"benchmarks": entries,
		}
		out, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			fmt.Fprintln(os.Stderr, "go_peers: encoding the report:", err)
			os.Exit(1)
		}
		fmt.Println(string(out))
	}
	if failed {
		fmt.Fprintln(os.Stderr, "FAILED: at least one sample failed its count/checksum check")
		os.Exit(1)
	}
}
