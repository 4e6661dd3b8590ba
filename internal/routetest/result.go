package routetest

import "time"

// Run is the outcome of `gwdev test`: every file's cases.
type Run struct {
	// Dir is the project folder served.
	Dir   string       `json:"dir"`
	Files []FileResult `json:"files"`
}

// FileResult is one test file's cases.
type FileResult struct {
	Path  string       `json:"path"`
	Cases []CaseResult `json:"cases"`
}

// CaseResult is one case's outcome. A case passes when it was sent and
// no expectation failed; a case that could not be sent fails (Error).
type CaseResult struct {
	Name   string `json:"name"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	// Error says why the case could not be sent or checked ("": it was).
	Error      string     `json:"error,omitempty"`
	Mismatches []Mismatch `json:"mismatches,omitempty"`
	Actual     *Actual    `json:"actual,omitempty"`
	// Explain is the request's trace as `gwdev explain` prints it.
	Explain  string        `json:"explain,omitempty"`
	Duration time.Duration `json:"durationNs"`
}

// Passed reports whether the case passed.
func (c *CaseResult) Passed() bool { return c.Error == "" && len(c.Mismatches) == 0 }

// Counts are the cases run and failed.
func (r *Run) Counts() (cases, failed int) {
	for _, f := range r.Files {
		for i := range f.Cases {
			cases++
			if !f.Cases[i].Passed() {
				failed++
			}
		}
	}
	return cases, failed
}
