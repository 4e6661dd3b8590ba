package emulator

import "github.com/prometheus/client_golang/prometheus"

// spansDesc is gwdev_spans_total: XTelemetryPolicy spans by what became of
// them (telemetry.go).
var spansDesc = prometheus.NewDesc("gwdev_spans_total",
	"XTelemetryPolicy spans by gateway, policy and outcome: exported, failed (the receiver refused them or could not be reached), dropped (the export queue was full), unexported (no receiver address).",
	[]string{"gateway", "policy", "outcome"}, nil)

// spanCollector reads the span counts of the Gateways with tracing at
// scrape time.
type spanCollector struct{ srv *Server }

var _ prometheus.Collector = spanCollector{}

// Describe implements prometheus.Collector.
func (c spanCollector) Describe(ch chan<- *prometheus.Desc) { ch <- spansDesc }

// Collect implements prometheus.Collector.
func (c spanCollector) Collect(ch chan<- prometheus.Metric) {
	for _, st := range c.srv.TelemetryStats() {
		for outcome, n := range map[string]int64{"exported": st.Exported, "failed": st.Failed, "dropped": st.Dropped, "unexported": st.Unexported} {
			ch <- prometheus.MustNewConstMetric(spansDesc, prometheus.CounterValue, float64(n), st.Gateway, st.Policy, outcome)
		}
	}
}
