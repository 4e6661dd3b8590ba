//go:build race

package watch

// raceEnabled is true when tests run with the race detector, which slows
// the loader down by an order of magnitude.
const raceEnabled = true
