// Package admin is gwdev's admin API: /routes, /traces, /traces/stream,
// /metrics and /healthz of a running data plane (and /status, which the CLI
// hands in), with its guard (loopback only, Host headers naming itself,
// pprof on request). It reads the data plane through emulator's exported
// API only (Server.Table, Traces, Subscribe, SubscribeTraces, TraceUsage,
// RefusedCounts, TelemetryStats); emulator never imports it, and
// cmd/gwdev wires the two.
package admin
