// The Go peer's cases beside the ecosystem workload (benchmarks/README.md, the select and
// rendezvous cases): select over 2 and 4 channels, and the rendezvous ping-pong over unbuffered
// channels. They run through the same timing loop, check and JSON as the ecosystem cases
// (main.go).
package main

import (
	"fmt"
	"sync"
)

func beyondCases() []benchCase {
	var cases []benchCase
	for _, rt := range runtimeRows {
		for _, consumers := range []int{1, 4} {
			for _, channels := range []int{2, 4} {
				cases = append(cases, selectSpec{rt, channels, consumers})
			}
		}
	}
	for _, rt := range runtimeRows[:2] { // current (GOMAXPROCS 1) and mt2 (2)
		cases = append(cases, rendezvousSpec{rt})
	}
	return cases
}

// ---- select ---------------------------------------------------------------------------------
//
// N channels of capacity 64, each fed by its own producer goroutine with its share of the
// 16,384 values (share k of topology {N, C}, as in the C++ case); the producer closes its
// channel when done. C consumers each loop on a `select` over all N channels; a receive that
// reports the channel closed sets that channel to nil (a nil channel's case never fires), and a
// consumer stops when every channel is nil: closed and drained. Go's select picks at random
// among ready cases; cochan's favours the lowest index. Named as the C++ case:
// `select/bounded/<runtime>/go_chan/<N>ch<C>c`.

type selectSpec struct {
	rt                  runtimeRow
	channels, consumers int
}

func (sp selectSpec) name() string {
	return fmt.Sprintf("select/bounded/%s/go_chan/%dch%dc/manual_time", sp.rt.name, sp.channels,
		sp.consumers)
}
func (sp selectSpec) procs() int   { return sp.rt.procs }
func (sp selectSpec) tallies() int { return sp.consumers }

func (sp selectSpec) prepare(tallies []tally) func() {
	topo := topology{sp.channels, sp.consumers}
	chans := make([]chan uint64, sp.channels)
	for i := range chans {
		chans[i] = make(chan uint64, boundedCapacity)
	}
	var done sync.WaitGroup
	done.Add(sp.channels + sp.consumers)
	return func() {
		for c := 0; c < sp.consumers; c++ {
			if sp.channels == 2 {
				go select2(chans[0], chans[1], &tallies[c], &done)
			} else {
				go select4(chans[0], chans[1], chans[2], chans[3], &tallies[c], &done)
			}
		}
		for p := 0; p < sp.channels; p++ {
			go selectProduce(chans[p], topo.first(p), topo.last(p), &done)
		}
		done.Wait()
	}
}

func selectProduce(ch chan uint64, first, last uint64, done *sync.WaitGroup) {
	for i := first; i < last; i++ {
		ch <- i + 1
	}
	close(ch)
	done.Done()
}

func select2(a, b chan uint64, t *tally, done *sync.WaitGroup) {
	var count, sum uint64
	for a != nil || b != nil {
		select {
		case v, ok := <-a:
			if !ok {
				a = nil
				continue
			}
			count, sum = count+1, sum+v
		case v, ok := <-b:
			if !ok {
				b = nil
				continue
			}
			count, sum = count+1, sum+v
		}
	}
	t.count, t.sum = count, sum
	done.Done() // publishes the tally to Wait
}

func select4(a, b, c, d chan uint64, t *tally, done *sync.WaitGroup) {
	var count, sum uint64
	for a != nil || b != nil || c != nil || d != nil {
		select {
		case v, ok := <-a:
			if !ok {
				a = nil
				continue
			}
			count, sum = count+1, sum+v
		case v, ok := <-b:
			if !ok {
				b = nil
				continue
			}
			count, sum = count+1, sum+v
		case v, ok := <-c:
			if !ok {
				c = nil
				continue
			}
			count, sum = count+1, sum+v
		case v, ok := <-d:
			if !ok {
				d = nil
				continue
			}
			count, sum = count+1, sum+v
		}
	}
	t.count, t.sum = count, sum
	done.Done()
}

// ---- rendezvous ping-pong -------------------------------------------------------------------
//
// Two goroutines and two unbuffered channels: the pinger sends each of the 16,384 values on
// ping and waits for it back on pong; the ponger echoes until ping is closed. One sample =
// 32,768 hand-offs. `rendezvous/<current|mt2>/go_chan/pingpong` (GOMAXPROCS 1 or 2).

type rendezvousSpec struct{ rt runtimeRow }

func (sp rendezvousSpec) name() string {
	return "rendezvous/" + sp.rt.name + "/go_chan/pingpong/manual_time"
}
func (sp rendezvousSpec) procs() int { return sp.rt.procs }
func (rendezvousSpec) tallies() int  { return 1 }

func (rendezvousSpec) prepare(tallies []tally) func() {
	ping, pong := make(chan uint64), make(chan uint64)
	var done sync.WaitGroup
	done.Add(2)
	return func() {
		go ponger(ping, pong, &done) // first, as in the C++ case
		go pinger(ping, pong, &tallies[0], &done)
		done.Wait()
	}
}

func pinger(ping chan<- uint64, pong <-chan uint64, t *tally, done *sync.WaitGroup) {
	var count, sum uint64
	for v := uint64(1); v <= totalValues; v++ {
		ping <- v
		w := <-pong
		count, sum = count+1, sum+w
	}
	close(ping)
	t.count, t.sum = count, sum
	done.Done()
}

func ponger(ping <-chan uint64, pong chan<- uint64, done *sync.WaitGroup) {
	for v := range ping {
		pong <- v
	}
	close(pong)
	done.Done()
}
