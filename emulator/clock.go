package emulator

import "time"

// The clock of a request's path: clockNow reads the wall clock and the
// monotonic one (two reads, time.Now), clockSince the monotonic one only
// (one read, with a t that has a monotonic reading). The path reads the
// clock only through them, so that a test can count its reads
// (TestLaneClockReads); a request's reads are a measurable part of its CPU.
var (
	clockNow   = time.Now
	clockSince = time.Since
)

// clockAfter is the time now, from one monotonic read since start
// (clockNow makes two): its wall clock is start's moved on by as much, so
// it is for times compared or subtracted, not printed as a wall clock.
func clockAfter(start time.Time) time.Time { return start.Add(clockSince(start)) }
