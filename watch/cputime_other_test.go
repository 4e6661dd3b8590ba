//go:build !unix

package watch

import "time"

// cpuTime is not measured here (speed_test.go measures it on unix): 0.
func cpuTime() time.Duration { return 0 }
