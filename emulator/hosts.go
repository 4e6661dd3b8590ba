package emulator

import (
	"strings"

	"github.com/gwdev/gwdev/engine/table"
)

// hostIndex finds the most specific hostname pattern that matches a host
// (engine/table's HostIndex: the engine and the CLI match hostnames with
// the same code).
type hostIndex = table.HostIndex

// newHostIndex indexes hostnames by position; the first of duplicates wins.
func newHostIndex(hostnames []string) hostIndex { return table.NewHostIndex(hostnames) }

// requestHost returns the request's host without port, lower case and
// without a trailing dot.
func requestHost(hostport string) string {
	h := hostport
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i > 0 {
			h = h[1:i]
		}
	} else if i := strings.LastIndexByte(h, ':'); i >= 0 && strings.IndexByte(h, ':') == i {
		h = h[:i]
	}
	h = strings.TrimSuffix(h, ".")
	for i := 0; i < len(h); i++ {
		if c := h[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(h)
		}
	}
	return h
}
