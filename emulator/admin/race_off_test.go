//go:build !race

package admin

// raceEnabled is true when tests run with the race detector.
const raceEnabled = false
