//go:build !race

package emulator

// raceEnabled is true when tests run with the race detector.
const raceEnabled = false
