package admin

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gwdev/gwdev/emulator"
)

// The collectors of the counts the data plane keeps itself, read at
// scrape time through its exported API.

// spansDesc is gwdev_spans_total: XTelemetryPolicy spans by what became of
// them (the data plane's telemetry.go).
var spansDesc = prometheus.NewDesc("gwdev_spans_total",
	"XTelemetryPolicy spans by gateway, policy and outcome: exported, failed (the receiver refused them or could not be reached), dropped (the export queue was full), unexported (no receiver address).",
	[]string{"gateway", "policy", "outcome"}, nil)

// spanCollector reads the span counts of the Gateways with tracing at
// scrape time (Server.TelemetryStats).
type spanCollector func() []emulator.TelemetryStats

var _ prometheus.Collector = spanCollector(nil)

// Describe implements prometheus.Collector.
func (c spanCollector) Describe(ch chan<- *prometheus.Desc) { ch <- spansDesc }

// Collect implements prometheus.Collector.
func (c spanCollector) Collect(ch chan<- prometheus.Metric) {
	for _, st := range c() {
		for outcome, n := range map[string]int64{"exported": st.Exported, "failed": st.Failed, "dropped": st.Dropped, "unexported": st.Unexported} {
			ch <- prometheus.MustNewConstMetric(spansDesc, prometheus.CounterValue, float64(n), st.Gateway, st.Policy, outcome)
		}
	}
}

// refusedDesc is gwdev_refused_total.
var refusedDesc = prometheus.NewDesc("gwdev_refused_total",
	"Connections (TCP, HTTP) and UDP datagrams starting a session refused over a listener's limit (--max-conns, --max-udp-sessions), counted as they happen.",
	[]string{"gateway", "listener", "proto"}, nil)

// refusedCollector exposes the server's refusal counts
// (Server.RefusedCounts), which move with every refusal rather than with
// the rate-limited refusal traces.
type refusedCollector func() map[emulator.RefusedKey]int64

var _ prometheus.Collector = refusedCollector(nil)

// Describe implements prometheus.Collector.
func (c refusedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- refusedDesc }

// Collect implements prometheus.Collector.
func (c refusedCollector) Collect(ch chan<- prometheus.Metric) {
	for k, n := range c() {
		ch <- prometheus.MustNewConstMetric(refusedDesc, prometheus.CounterValue, float64(n), k.Gateway, k.Listener, k.Proto)
	}
}
