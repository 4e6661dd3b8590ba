//go:build race

package h1

// raceEnabled is true when tests run with the race detector.
const raceEnabled = true
