package admin

import (
	"fmt"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gwdev/gwdev/emulator"
)

// Request metrics count every trace once, in its own series, across the
// collector's cache of series and after the cache starts over. The traces
// are counted as collect counts what its subscription delivers (the path
// from the data plane's trace ring to /metrics is TestAdminServesTraffic's).
func TestAdminMetricsPerSeries(t *testing.T) {
	a := New(emulator.New(emulator.Config{}), nil)
	a.Close() // collect has returned: the test counts in its place
	cache := map[seriesKey]*requestSeries{}
	routes := maxCachedSeries + 10 // the cache fills and starts over
	for i := range routes {
		for range 2 {
			a.count(cache, &emulator.Trace{Gateway: "gateway/default/gw", Listener: "http", Route: fmt.Sprintf("httproute/default/r%d", i),
				Status: 200, BytesOut: 5, Duration: emulator.Duration(time.Millisecond)})
		}
	}
	a.count(cache, &emulator.Trace{Gateway: "gateway/default/gw", Listener: "http", Status: 404, BytesOut: 9})
	if len(cache) != 11 {
		t.Errorf("%d series cached, want 11: the cache starts over past %d", len(cache), maxCachedSeries)
	}
	wantBytes := fmt.Sprintf(`gwdev_response_bytes_total{gateway="gateway/default/gw",listener="http"} %d`, 10*routes+9)
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	if !regexp.MustCompile(regexp.QuoteMeta(wantBytes) + "\n").MatchString(body) {
		t.Errorf("no line %q", wantBytes)
	}
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

// The counts the data plane keeps itself (span outcomes, refusals) are
// exposed as they are at scrape time, one series per gateway, policy or
// listener and outcome or protocol.
func TestDataPlaneCountsExposed(t *testing.T) {
	spans := []emulator.TelemetryStats{{Gateway: "gateway/default/gw", Policy: "default/tracing", Exported: 5, Dropped: 35}}
	refused := map[emulator.RefusedKey]int64{
		{Gateway: "gateway/default/gw", Listener: "gateway/default/gw/listener/a", Proto: "HTTP"}:  3,
		{Gateway: "gateway/default/gw", Listener: "gateway/default/gw/listener/dns", Proto: "UDP"}: 100,
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(spanCollector(func() []emulator.TelemetryStats { return spans }),
		refusedCollector(func() map[emulator.RefusedKey]int64 { return refused }))
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	var got []string
	for _, l := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(l, "gwdev_") {
			got = append(got, l)
		}
	}
	want := []string{
		`gwdev_refused_total{gateway="gateway/default/gw",listener="gateway/default/gw/listener/a",proto="HTTP"} 3`,
		`gwdev_refused_total{gateway="gateway/default/gw",listener="gateway/default/gw/listener/dns",proto="UDP"} 100`,
		`gwdev_spans_total{gateway="gateway/default/gw",outcome="dropped",policy="default/tracing"} 35`,
		`gwdev_spans_total{gateway="gateway/default/gw",outcome="exported",policy="default/tracing"} 5`,
		`gwdev_spans_total{gateway="gateway/default/gw",outcome="failed",policy="default/tracing"} 0`,
		`gwdev_spans_total{gateway="gateway/default/gw",outcome="unexported",policy="default/tracing"} 0`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("metrics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
