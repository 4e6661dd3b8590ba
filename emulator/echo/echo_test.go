package echo

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gwdev/gwdev/engine/table"
)

// TestEchoRetrySimulation: /retry/ fails the first succeedAfter attempts of
// a uuid (with responseCode, else a reset), then echoes.
func TestEchoRetrySimulation(t *testing.T) {
	e := NewTarget(&table.Backend{Service: table.ObjectKey{Kind: "Service", Namespace: "default", Name: "flaky"}, Port: 80}, nil, nil)
	get := func(q string) (int, error) {
		resp, err := e.RoundTrip(httptest.NewRequest(http.MethodGet, "http://echo/retry/x?"+q, nil))
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}
	for i, want := range []int{503, 503, 200, 200} {
		if code, err := get("uuid=a&succeedAfter=2&responseCode=503"); err != nil || code != want {
			t.Errorf("attempt %d = %d, %v; want %d", i+1, code, err, want)
		}
	}
	if _, err := get("uuid=b&succeedAfter=1"); !errors.Is(err, ErrReset) {
		t.Errorf("connection failure mode: err = %v, want a reset", err)
	}
	if code, err := get("uuid=b&succeedAfter=1"); err != nil || code != 200 {
		t.Errorf("after the failure = %d, %v; want 200", code, err)
	}
	if code, _ := get("succeedAfter=1"); code != http.StatusBadRequest {
		t.Errorf("without uuid = %d, want 400", code)
	}
}
