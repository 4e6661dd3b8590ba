package main

import (
	"time"

	"github.com/gwdev/gwdev/internal/report"
)

// plural and roundDur are report's wording of counts and durations, for
// the commands' own lines (check's summary itself is report.WriteSummary).
func plural(n int, word string) string { return report.Plural(n, word) }

func roundDur(d time.Duration) time.Duration { return report.RoundDuration(d) }
