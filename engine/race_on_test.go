//go:build race

package engine_test

// raceEnabled is true when tests run with the race detector, which slows
// translation down several times.
const raceEnabled = true
