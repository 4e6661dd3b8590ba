//go:build race

package admin

// raceEnabled is true when tests run with the race detector, which slows
// request parsing and JSON encoding by an order of magnitude.
const raceEnabled = true
