package emulator

import (
	"fmt"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// Request metrics count every trace once, in its own series, across the
// collector's cache of series and after the cache starts over.
func TestAdminMetricsPerSeries(t *testing.T) {
	s := New(Config{})
	a := NewAdmin(s, nil)
	routes := maxCachedSeries + 10 // the cache fills and starts over
	for i := range routes {
		for range 2 {
			s.traces.record(Trace{Gateway: "gateway/default/gw", Listener: "http", Route: fmt.Sprintf("httproute/default/r%d", i),
				Status: 200, BytesOut: 5, Duration: Duration(time.Millisecond)})
		}
	}
	s.traces.record(Trace{Gateway: "gateway/default/gw", Listener: "http", Status: 404, BytesOut: 9})
	wantBytes := fmt.Sprintf(`gwdev_response_bytes_total{gateway="gateway/default/gw",listener="http"} %d`, 10*routes+9)
	var body string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		rec := httptest.NewRecorder()
		a.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		if body = rec.Body.String(); regexp.MustCompile(regexp.QuoteMeta(wantBytes) + "\n").MatchString(body) {
			break
		}
	}
	a.Close()
	series := regexp.MustCompile(`(?m)^gwdev_requests_total\{code="(\d+)",gateway="gateway/default/gw",listener="http",route="([^"]+)"\} (\d+)$`).FindAllStringSubmatch(body, -1)
	if len(series) != routes+1 {
		t.Fatalf("%d request series, want %d (bytes line %q found: %v)", len(series), routes+1, wantBytes,
			regexp.MustCompile(regexp.QuoteMeta(wantBytes)).MatchString(body))
	}
	for _, m := range series {
		n, _ := strconv.Atoi(m[3])
		switch {
		case m[2] == "-" && (m[1] != "404" || n != 1):
			t.Errorf("unrouted series %v, want code 404 counted once", m[0])
		case m[2] != "-" && (m[1] != "200" || n != 2):
			t.Errorf("series %v, want code 200 counted twice", m[0])
		}
	}
	if want := fmt.Sprintf(`gwdev_request_duration_seconds_count{gateway="gateway/default/gw",listener="http"} %d`, 2*routes+1); !regexp.MustCompile(regexp.QuoteMeta(want) + "\n").MatchString(body) {
		t.Errorf("no line %q", want)
	}
}
