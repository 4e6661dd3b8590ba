package h1

import "time"

// The clock of a request's path: clockNow reads the wall clock and the
// monotonic one (two reads, time.Now), clockSince the monotonic one only
// (one read, with a t that has a monotonic reading). The path reads the
// clock only through them, so that a test can count its reads
// (TestKeepAliveClockReads); a request's reads are a measurable part of
// its CPU.
var (
	clockNow   = time.Now
	clockSince = time.Since
)

// clockAfter is the time now, from one monotonic read since base (clockNow
// makes two), or clockNow's when base is zero: its wall clock is base's
// moved on by as much, so it is for deadlines and times compared, not
// printed as a wall clock.
func clockAfter(base time.Time) time.Time {
	if base.IsZero() {
		return clockNow()
	}
	return base.Add(clockSince(base))
}
