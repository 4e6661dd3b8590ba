package admin

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"time"
)

// Options say who may reach the admin API and what it offers.
type Options struct {
	// AllowRemote lets the admin API bind a non-loopback address and answer
	// any Host header (false: loopback only, and only Host headers naming
	// the bound address, localhost or a loopback IP, which defeats DNS
	// rebinding: a web page cannot read /traces through a name of its own).
	AllowRemote bool
	// Pprof serves Go's profiler under /debug/pprof/ (false: not served).
	// Profiles and execution traces run at most MaxProfileDuration.
	Pprof bool
	// Instance, when set, is sent as the Gwdev-Instance header of every
	// answer, so that a client can tell which gwdev it reached (two
	// instances may run; one of them then serves the admin API elsewhere).
	Instance string
	// Web is the web view (internal/web), served under /ui/ (nil: not
	// served). It answers only Host headers naming a loopback address, the
	// DNS-rebinding guard, even with AllowRemote.
	Web http.Handler
}

// WebPath is where the admin API serves the web view (Options.Web).
const WebPath = "/ui/"

// InstanceHeader names the gwdev instance that answered an admin request.
const InstanceHeader = "Gwdev-Instance"

// MaxProfileDuration caps /debug/pprof/profile and /debug/pprof/trace
// (?seconds= asks for less).
const MaxProfileDuration = 30 * time.Second

// checkAdminAddr refuses a non-loopback admin address unless allowRemote.
func checkAdminAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("admin address %q: %w", addr, err)
	}
	if allowRemote || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("admin address %q is not loopback (--admin-allow-remote to expose it)", addr)
	}
	return nil
}

// guardHost answers 421 to a request whose Host header is not the bound
// address, localhost or a loopback IP (with the bound port, or none).
func guardHost(bound net.Addr, next http.Handler) http.Handler {
	_, port, _ := net.SplitHostPort(bound.String())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowedAdminHost(r.Host, port) {
			http.Error(w, fmt.Sprintf("gwdev admin API: Host %q is not this admin address (DNS rebinding?); use http://127.0.0.1:%s/", r.Host, port),
				http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func allowedAdminHost(hostport, port string) bool {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		host, p = hostport, ""
	}
	if p != "" && p != port {
		return false
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// withPprof adds Go's profiler to mux, each profile capped at
// MaxProfileDuration.
func withPprof(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.Handle("/debug/pprof/profile", capSeconds(http.HandlerFunc(pprof.Profile)))
	mux.Handle("/debug/pprof/trace", capSeconds(http.HandlerFunc(pprof.Trace)))
}

// capSeconds lowers a ?seconds= above MaxProfileDuration to it.
func capSeconds(next http.Handler) http.Handler {
	maxSec := int(MaxProfileDuration / time.Second)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if s, err := strconv.ParseFloat(q.Get("seconds"), 64); err == nil && s > float64(maxSec) {
			q.Set("seconds", strconv.Itoa(maxSec))
			r.URL.RawQuery = q.Encode()
		}
		next.ServeHTTP(w, r)
	})
}
