package emulator

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Loops: a backend or a mirror whose address is one of gwdev's own
// listeners (a --backend mapping, an EndpointSlice or an ExternalName
// pointing back at a Gateway) sends the request back into gwdev. Chaining
// one Gateway into another can be meant, so it is not refused; but every
// request gwdev forwards or mirrors carries a Via entry naming this
// Server (RFC 9110 §7.6.3: "1.1 gwdev-<random>"), appended after the
// rule's header filters so that no filter removes it, and:
//   - a request that has passed through this Server maxPasses times is
//     answered 508 Loop Detected instead of being forwarded again, and
//   - a request that has passed through this Server at least once is never
//     mirrored (a mirror of a mirror is what turns one request into
//     thousands).
// Both decisions are in the trace (Reason, Filters) and in Explain:
// Server.Explain counts the Server's own Via entries; the offline Explain
// has no Server to recognise and counts every gwdev's (explainVia).

// maxPasses is how many times a request may pass through one Server before
// it is answered 508 Loop Detected: enough for Gateways chained into each
// other, few enough that a loop ends after a handful of requests.
const maxPasses = 8

// viaPrefix starts the received-by pseudonym of every Server's Via entry.
const viaPrefix = "gwdev-"

// viaEntries are one Server's Via values by the received protocol, each a
// slice of one value shared by every request (capped: an append copies;
// nothing writes into a header's slice, see outboundHead).
type viaEntries struct {
	// name is the Server's received-by pseudonym ("gwdev-<12 hex>").
	name          string
	h10, h11, h20 []string
	// anyGwdev counts every received-by starting with viaPrefix as this
	// one (explainVia).
	anyGwdev bool
}

// explainVia is the offline Explain's: it stands for the gwdev that would
// serve the table, whichever process that is, so every gwdev's Via entry
// counts as a pass; it adds none (no request is sent).
var explainVia = viaEntries{name: viaPrefix + "*", anyGwdev: true}

// newViaEntries makes a Server's Via values named viaPrefix+id (id "": a
// random pseudonym, so that two gwdev processes chained into each other
// count apart).
func newViaEntries(id string) viaEntries {
	if id == "" {
		var b [6]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		id = hex.EncodeToString(b[:])
	}
	name := viaPrefix + id
	one := func(proto string) []string { s := []string{proto + " " + name}; return s[:1:1] }
	return viaEntries{name: name, h10: one("1.0"), h11: one("1.1"), h20: one("2")}
}

// entry is the Via value for a request received over r's protocol.
func (v *viaEntries) entry(r *http.Request) []string {
	switch {
	case r.ProtoMajor >= 2:
		return v.h20
	case r.ProtoMajor == 1 && r.ProtoMinor == 0:
		return v.h10
	}
	return v.h11
}

// addVia appends the Server's Via entry to an outbound header h (the
// request was received as in).
func (v *viaEntries) addVia(h http.Header, in *http.Request) {
	if v.name == "" || v.anyGwdev {
		return
	}
	e := v.entry(in)
	prior := h["Via"]
	if len(prior) == 0 {
		h["Via"] = e
		return
	}
	out := make([]string, len(prior)+1)
	copy(out, prior)
	out[len(prior)] = e[0]
	h["Via"] = out
}

// markVia gives h, a request gwdev makes on the client's behalf (to an
// error backend or an ExternalAuth backend), the Via entries the client's
// request carried and this Server's own, so that a backend which is gwdev
// itself counts the pass and the loop ends (checkLoop) instead of
// recursing.
func (ex *exchange) markVia(h http.Header) {
	if ex.via == nil {
		return
	}
	if prior := ex.req.Header["Via"]; len(prior) > 0 {
		h["Via"] = slices.Clone(prior)
	}
	ex.via.addVia(h, ex.req)
}

// passes counts the entries of h's Via fields that name this Server: how
// many times the request already went through it.
func (v *viaEntries) passes(h http.Header) int {
	if v.name == "" {
		return 0
	}
	n, mark := 0, v.name
	if v.anyGwdev {
		mark = viaPrefix
	}
	for _, f := range h["Via"] {
		if !strings.Contains(f, mark) {
			continue // the common case: another proxy's, or none of ours
		}
		for e := range strings.SplitSeq(f, ",") {
			// received-protocol SP received-by [ SP comment ]
			_, by, ok := strings.Cut(strings.TrimSpace(e), " ")
			if !ok {
				continue
			}
			by, _, _ = strings.Cut(strings.TrimSpace(by), " ")
			if by == v.name || v.anyGwdev && strings.HasPrefix(by, viaPrefix) {
				n++
			}
		}
	}
	return n
}

// loopReason is the trace's Reason for a request answered 508.
func loopReason(passes int, name string) string {
	return "loop detected: the request has passed through this gwdev " + strconv.Itoa(passes) +
		" times already (its Via field names " + name + " that often; the limit is " + strconv.Itoa(maxPasses) +
		"): a backend or mirror of a route sends requests back into gwdev's own listener (gwdev check warns about it); answered 508 Loop Detected, not forwarded again"
}

// checkLoop answers a request that has passed through this Server
// maxPasses times with 508 (decide); done is false for every other one.
func (ex *exchange) checkLoop() (action, bool) {
	if ex.passes < maxPasses {
		return 0, false
	}
	ex.trace.Reason = loopReason(ex.passes, ex.via.name)
	ex.status = http.StatusLoopDetected
	return actRefused, true
}

// mirrorLoops reports, for addMirror, why the request is not mirrored
// because it already passed through this Server ("": it may be).
func (ex *exchange) mirrorLoops(service string) string {
	if ex.passes == 0 {
		return ""
	}
	return "RequestMirror: " + service + " skipped (the request already passed through this gwdev " +
		strconv.Itoa(ex.passes) + " time(s), Via " + ex.via.name + ": gwdev never mirrors a request twice)"
}
