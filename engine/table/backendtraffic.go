package table

import (
	"encoding/json"
	"time"
)

// RetryBudget limits the retries sent to one backend: an
// XBackendTrafficPolicy's retryConstraint, with the API's defaults applied.
// Every Backend with the same Key shares one count of requests and retries,
// whichever rule or route sends them. A retry is allowed while the retries
// of the last Interval stay within Percent of the requests (first tries and
// retries) of that Interval, or while fewer than MinRetries retries were
// made in the last MinInterval; a retry beyond both is not made and the
// client gets 503.
type RetryBudget struct {
	// Policy is "<ns>/<name>" of the XBackendTrafficPolicy.
	Policy string `json:"policy"`
	// Key names the shared count: "<Kind>/<ns>/<name>" of the backend the
	// policy targets.
	Key string `json:"key"`
	// Percent is the share of the requests of Interval that may be retries
	// (0-100).
	Percent int `json:"percent"`
	// Interval is the window requests and retries are counted over.
	Interval time.Duration `json:"-"`
	// MinRetries retries per MinInterval are allowed whatever the budget
	// (0: no minimum).
	MinRetries int `json:"minRetries,omitempty"`
	// MinInterval is the window of MinRetries (0 when MinRetries is 0).
	MinInterval time.Duration `json:"-"`
}

// retryBudgetJSON is RetryBudget with its durations as text.
type retryBudgetJSON struct {
	Policy      string       `json:"policy"`
	Key         string       `json:"key"`
	Percent     int          `json:"percent"`
	Interval    jsonDuration `json:"interval"`
	MinRetries  int          `json:"minRetries,omitempty"`
	MinInterval jsonDuration `json:"minInterval,omitempty"`
}

// MarshalJSON writes the budget with its windows as durations ("10s").
func (b RetryBudget) MarshalJSON() ([]byte, error) {
	return json.Marshal(retryBudgetJSON{b.Policy, b.Key, b.Percent, jsonDuration(b.Interval), b.MinRetries, jsonDuration(b.MinInterval)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (b *RetryBudget) UnmarshalJSON(data []byte) error {
	var j retryBudgetJSON
	err := json.Unmarshal(data, &j)
	*b = RetryBudget{Policy: j.Policy, Key: j.Key, Percent: j.Percent, Interval: time.Duration(j.Interval),
		MinRetries: j.MinRetries, MinInterval: time.Duration(j.MinInterval)}
	return err
}

// TargetXBackend is the target kind of an XBackend backendRef: its
// external hostname and port, dialled as they are.
const TargetXBackend = "xbackend"

// TargetPods is the target kind of an XBackend of type EndpointSelector:
// its endpoints are the Pods named in Target.Pods (in order), each answered
// by the built-in echo backend as that Pod on the XBackend's port. No Pod
// means no endpoint: requests get 503.
const TargetPods = "pods"
