//go:build race

package engine

// raceDetector is true when the tests of package engine run with the race
// detector, whose instrumentation moves allocation counts.
const raceDetector = true
