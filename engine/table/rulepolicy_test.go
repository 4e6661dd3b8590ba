package table

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 25 * time.Millisecond: "25ms", time.Minute: "1m", 90 * time.Second: "1m30s",
		time.Hour + 2*time.Minute + 3*time.Second + 4*time.Millisecond: "1h2m3s4ms", -time.Second: "-1s",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(want); err != nil || back != d {
			t.Errorf("%q parses to %v, %v", want, back, err)
		}
	}
}

// TestRuleSettingsJSON: the durations serialise as text and read back
// unchanged (the emulator's tests read engine golden tables).
func TestRuleSettingsJSON(t *testing.T) {
	in := RouteRule{Name: "r",
		Timeouts:           &Timeouts{Request: 90 * time.Second},
		Retry:              &Retry{Codes: []int{503}, Attempts: 2, Backoff: 250 * time.Millisecond},
		SessionPersistence: &Session{Type: SessionCookie, Name: "s", AbsoluteTimeout: time.Hour, Lifetime: LifetimePermanent}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"r","route":{"kind":"","name":""},"timeouts":{"request":"1m30s"},` +
		`"retry":{"codes":[503],"attempts":2,"backoff":"250ms"},` +
		`"sessionPersistence":{"type":"Cookie","name":"s","absoluteTimeout":"1h","lifetime":"Permanent"}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	var out RouteRule
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, out); d != "" {
		t.Errorf("round trip (-in +out):\n%s", d)
	}
}
