package h1

import "runtime"

// yieldRound lets every other goroutine that is ready to run go first, and
// is called right before a write that wakes a peer: the answer's last flush
// to the client and the request taken to a pooled backend connection.
//
// Why: a write to a loopback peer that sleeps (wrk's threads, nginx, a
// developer's backend) wakes it, and on a virtual machine a wake with its
// scheduler's interrupt is the dearest step of a forwarded request: about
// 8 µs of the writer's CPU per wake on the 2-core development machine,
// where a whole request costs 16–19. Serving on few Ps (ServeProcs), the
// data plane runs a round of ready connections one after the other; with
// each write at the end of its goroutine's work, a round's writes were
// spread over the round and each found its peer asleep again (0.48 wakes
// per request against nginx's 0.28). Yielding first puts the writes of a
// round together at its end, where the peer woken by the first is still
// awake for the next: 0.20 wakes per request, 10–15% less CPU per request.
// Nothing waits on it: with nothing else ready to run the goroutine goes on
// at once (a Gosched, a few hundred nanoseconds). A second yield gained
// nothing. docs/decisions/proxying.md, part 5.
//
// TestAnswerWaitsForTheRound and TestPooledRequestWaitsForTheRound hold it.
func yieldRound() { runtime.Gosched() }
