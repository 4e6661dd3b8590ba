package emulator

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine/table"
)

// Access-log filtering from an implementation profile
// (table.GatewayTable.AccessLog, for example gwin's logs.disable and
// logs.discardRule.*): it decides which lines the access log writes. Traces
// (the ring, subscribers, the TUI, the admin API) always keep everything.

// keepAccessLine reports whether the access log writes t: not when its
// Gateway's log is disabled, and not when the first discard rule that
// matches its status drops it (DiscardPercent percent of the time).
func (s *Server) keepAccessLine(t *Trace) bool {
	rt := s.current.Load()
	if rt == nil || rt.table == nil || t.Gateway == "" {
		return true
	}
	for _, g := range rt.table.Gateways {
		if g != nil && g.Name == t.Gateway {
			return keepLine(g.AccessLog, t, rand.IntN)
		}
	}
	return true
}

// keepLine applies an access-log policy to one trace; intn is the random
// source (rand.IntN).
func keepLine(p *table.AccessLogPolicy, t *Trace, intn func(int) int) bool {
	if p == nil {
		return true
	}
	if p.Disabled {
		return false
	}
	for i := range p.DiscardRules {
		r := &p.DiscardRules[i]
		if !discardRuleMatches(r, t) {
			continue
		}
		return r.DiscardPercent <= 0 || (r.DiscardPercent < 100 && intn(100) >= r.DiscardPercent)
	}
	return true
}

// discardRuleMatches reports whether a trace's HTTP status is in the
// rule's codes or intervals, or its gRPC status in its gRPC codes.
func discardRuleMatches(r *table.LogDiscardRule, t *Trace) bool {
	for _, c := range r.HTTPCodes {
		if t.Status == c {
			return true
		}
	}
	for _, iv := range r.HTTPCodeIntervals {
		if iv == "HTTP_ALL" && t.Status > 0 {
			return true
		}
		if len(iv) == len("HTTP_1XX") && t.Status/100 == int(iv[5]-'0') {
			return true
		}
	}
	if len(r.GRPCCodes) > 0 {
		if code, ok := traceGRPCCode(t); ok {
			for _, c := range r.GRPCCodes {
				if grpcCodeKey(c) == code {
					return true
				}
			}
		}
	}
	return false
}

// traceGRPCCode is the gRPC status of a trace as a grpcCodeKey: the
// trace's GRPCStatus name, else its grpc-status header.
func traceGRPCCode(t *Trace) (string, bool) {
	if !t.GRPC {
		return "", false
	}
	if t.GRPCStatus != "" {
		return grpcCodeKey(t.GRPCStatus), true
	}
	v := t.ResponseHeaders.Get("Grpc-Status")
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n >= len(grpcCodeNames) {
		return "", false
	}
	return grpcCodeKey(grpcCodeNames[n]), true
}

// grpcCodeNames are the gRPC status names by code, as gwin writes them.
var grpcCodeNames = []string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
	"OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

// grpcCodeKey normalises a gRPC status name ("DEADLINE_EXCEEDED",
// "DeadlineExceeded", "Canceled"/"CANCELLED") for comparison.
func grpcCodeKey(name string) string {
	k := strings.ToLower(strings.ReplaceAll(name, "_", ""))
	if k == "canceled" {
		return "cancelled"
	}
	return k
}
