//go:build !race

package report

// raceDetector is true when the tests run with the race detector, whose
// sync.Pool drops items at random (allocation counts move).
const raceDetector = false
