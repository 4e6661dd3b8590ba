package echo

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gwdev/gwdev/emulator/internal/wire"
	"github.com/gwdev/gwdev/engine/table"
)

// Target is the built-in echo backend of one Service port. It answers
// like the Gateway API conformance echo server (echo-basic): a JSON
// description of the request it received, /status/<code>, ?delay=<duration>
// and X-Echo-Set-Header. It is an http.RoundTripper, so requests reach it
// through the same proxy path (filters, retries, timeouts) as real backends.
// gRPC calls get the conformance gRPC echo service (grpcecho.go); TCPRoute,
// TLSRoute and UDPRoute traffic gets the conformance TCP and UDP echo
// servers' protocols (echol4.go).
type Target struct {
	namespace, service string
	port               int32
	pod                string
	log                *Log
	retries            retrySimulation
	// authHeader, when set, makes this echo a demo auth server
	// (echoauth.go): it allows requests carrying this header.
	authHeader string
	// ingress names the Gateway a request arrived at (nil: none).
	ingress func(context.Context) string
	// greetSoon is set while the TCP echo's last client without HTTP
	// waited for its greeting: the next one is greeted after
	// echoSniffWindowWaiting (echotls.go).
	greetSoon atomic.Bool
}

var _ http.RoundTripper = (*Target)(nil)

// NewTarget returns the echo of backend b. logFor, when set, gives the log
// of an echo Service ("namespace/name"); ingress, when set, names the
// Gateway a request arrived at, which the echo reports.
func NewTarget(b *table.Backend, logFor func(service string) *Log, ingress func(context.Context) string) *Target {
	e := &Target{namespace: b.Service.Namespace, service: b.Service.Name, port: b.Port, ingress: ingress}
	if b.Target != nil {
		e.authHeader = b.Target.EchoAuthHeader
	}
	key := e.namespace + "/" + e.service
	h := fnv.New64a()
	h.Write([]byte(key))
	sum := strconv.FormatUint(h.Sum64(), 36)
	for len(sum) < 15 {
		sum = "0" + sum
	}
	e.pod = e.service + "-" + sum[:10] + "-" + sum[10:15]
	if b.Target != nil && len(b.Target.Pods) == 1 {
		e.pod = b.Target.Pods[0] // the echo container of that Pod answers as the Pod
	}
	if logFor != nil {
		e.log = logFor(key)
	}
	return e
}

// Response is the conformance echo server's JSON.
type Response struct {
	Path      string              `json:"path"`
	Host      string              `json:"host"`
	Method    string              `json:"method"`
	Proto     string              `json:"proto"`
	Headers   map[string][]string `json:"headers"`
	HTTPPort  string              `json:"httpPort,omitempty"`
	Namespace string              `json:"namespace"`
	Ingress   string              `json:"ingress"`
	Service   string              `json:"service"`
	Pod       string              `json:"pod"`
	TLS       *ResponseTLS        `json:"tls,omitempty"`
}

// ResponseTLS is the TLS part of Response.
type ResponseTLS struct {
	Version            string `json:"version"`
	ServerName         string `json:"serverName"`
	NegotiatedProtocol string `json:"negotiatedProtocol,omitempty"`
	CipherSuite        string `json:"cipherSuite"`
	// PeerCertificates are the client's certificates, PEM encoded, as the
	// conformance echo server reports them.
	PeerCertificates []string `json:"peerCertificates,omitempty"`
}

// RoundTrip answers req in process.
func (e *Target) RoundTrip(req *http.Request) (*http.Response, error) {
	uri := req.URL.RequestURI()
	if e.log != nil {
		client := req.Header.Get("X-Forwarded-For")
		e.log.Add(fmt.Sprintf("Echoing back request made to %s to client (%s)", uri, client))
	}
	if wire.IsGRPC(req) {
		return e.roundTripGRPC(req) // grpcecho.go
	}
	if e.authHeader != "" {
		return e.authorize(req), nil // echoauth.go
	}
	if isEchoWebSocket(req) {
		return e.roundTripWebSocket(req) // echo_ws.go
	}
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	path := req.URL.Path
	switch {
	case path == "/health":
		return echoReply(req, http.StatusOK, nil, []byte("OK")), nil
	case strings.HasPrefix(path, "/status/"):
		code, err := strconv.Atoi(strings.TrimPrefix(path, "/status/"))
		if err != nil || code < 100 || code > 999 {
			code = http.StatusBadRequest
		}
		return echoReply(req, code, nil, nil), nil
	case strings.HasPrefix(path, "/retry/"):
		if resp, failed, err := e.retries.attempt(req); failed {
			return resp, err
		}
	}
	if d := req.URL.Query().Get("delay"); d != "" {
		dur, err := time.ParseDuration(d)
		if err != nil {
			return echoError(req, err), nil
		}
		if err := wire.Sleep(req.Context(), dur); err != nil {
			return nil, err
		}
	}
	ingress := e.ingressOf(req.Context())
	headers := req.Header.Clone()
	if ua, ok := headers["User-Agent"]; ok && len(ua) == 1 && ua[0] == "" {
		delete(headers, "User-Agent") // the proxy's placeholder, not the client's
	}
	body, err := json.MarshalIndent(Response{
		Path: uri, Host: req.Host, Method: req.Method, Proto: req.Proto, Headers: headers,
		HTTPPort: strconv.Itoa(int(e.port)), Namespace: e.namespace, Ingress: ingress,
		Service: e.service, Pod: e.pod, TLS: echoTLSState(req),
	}, "", " ")
	if err != nil {
		return echoError(req, err), nil
	}
	h := http.Header{}
	echoSetHeaders(h, req.Header["X-Echo-Set-Header"])
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	return echoReply(req, http.StatusOK, h, body), nil
}

// echoSetHeaders applies X-Echo-Set-Header values: comma-separated
// "Name:value" pairs set on the response, names kept as written.
func echoSetHeaders(h http.Header, values []string) {
	for _, list := range values {
		for _, kv := range strings.Split(list, ",") {
			name, value, _ := strings.Cut(strings.TrimSpace(kv), ":")
			if name == "" {
				continue
			}
			if len(h[name]) == 0 {
				h[name] = []string{value}
			} else {
				h[name][0] += "," + strings.TrimSpace(value)
			}
		}
	}
}

// echoTerminatedTLS marks, in a request's context, that the echo backend
// terminated the request's TLS connection itself.
type echoTerminatedTLS struct{}

// echoTLSState reports the TLS state a request arrived with. The peer
// certificates are only reported when the echo terminated the connection:
// otherwise req.TLS is the client's connection to the listener, and its
// certificate was presented to the gateway, not to the backend.
func echoTLSState(req *http.Request) *ResponseTLS {
	cs := req.TLS
	if cs == nil {
		return nil
	}
	et := &ResponseTLS{Version: tls.VersionName(cs.Version), ServerName: cs.ServerName,
		NegotiatedProtocol: cs.NegotiatedProtocol, CipherSuite: tls.CipherSuiteName(cs.CipherSuite)}
	if terminated, _ := req.Context().Value(echoTerminatedTLS{}).(bool); !terminated {
		return et
	}
	for _, c := range cs.PeerCertificates {
		et.PeerCertificates = append(et.PeerCertificates, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})))
	}
	return et
}

func echoError(req *http.Request, err error) *http.Response {
	body, _ := json.Marshal(struct {
		Message string `json:"message"`
	}{err.Error()})
	h := http.Header{"Content-Type": {"application/json"}, "X-Content-Type-Options": {"nosniff"}}
	return echoReply(req, http.StatusInternalServerError, h, body)
}

func echoReply(req *http.Request, code int, h http.Header, body []byte) *http.Response {
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{
		Status: strconv.Itoa(code) + " " + http.StatusText(code), StatusCode: code,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
		Request: req,
	}
}

// retrySimulation is echo-basic's flaky backend (/retry/...): a request
// identified by ?uuid= fails its first ?succeedAfter= attempts, with
// ?responseCode= if given, else with a connection reset; ?delayRetry=
// delays each failure. Later attempts are echoed.
type retrySimulation struct {
	mu       sync.Mutex
	attempts map[string]int
}

// maxRetryUUIDs bounds the attempts map; it is cleared when full.
const maxRetryUUIDs = 10000

// attempt counts one attempt of req; failed says the attempt fails, with
// resp or err.
func (r *retrySimulation) attempt(req *http.Request) (resp *http.Response, failed bool, err error) {
	q := req.URL.Query()
	uuid := q.Get("uuid")
	if uuid == "" {
		return echoReply(req, http.StatusBadRequest, nil, []byte("uuid is required")), true, nil
	}
	succeedAfter, err := strconv.Atoi(q.Get("succeedAfter"))
	if err != nil {
		return echoReply(req, http.StatusBadRequest, nil, []byte("succeedAfter is required")), true, nil
	}
	r.mu.Lock()
	if r.attempts == nil || len(r.attempts) >= maxRetryUUIDs {
		r.attempts = map[string]int{}
	}
	n := r.attempts[uuid]
	if n < succeedAfter {
		r.attempts[uuid] = n + 1
	}
	r.mu.Unlock()
	if n >= succeedAfter {
		return nil, false, nil
	}
	if d := q.Get("delayRetry"); d != "" {
		dur, err := time.ParseDuration(d)
		if err != nil {
			return echoError(req, err), true, nil
		}
		if err := wire.Sleep(req.Context(), dur); err != nil {
			return nil, true, err
		}
	}
	if code, err := strconv.Atoi(q.Get("responseCode")); err == nil {
		return echoReply(req, code, nil, nil), true, nil
	}
	return nil, true, ErrReset
}

// Log is a bounded log of one echo service's lines.
type Log struct {
	mu    sync.Mutex
	lines []logLine
	next  int
	full  bool
}

// logLine is one log line and when it was logged.
type logLine struct {
	at   time.Time
	text string
}

const logSize = 2000

// Add appends a line.
func (l *Log) Add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lines == nil {
		l.lines = make([]logLine, logSize)
	}
	l.lines[l.next] = logLine{at: time.Now(), text: line}
	l.next++
	if l.next == len(l.lines) {
		l.next, l.full = 0, true
	}
}

// Since returns the lines logged at or after t (all: zero t), oldest
// first.
func (l *Log) Since(t time.Time) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	add := func(lines []logLine) {
		for _, ln := range lines {
			if !ln.at.Before(t) {
				out = append(out, ln.text)
			}
		}
	}
	if l.full {
		add(l.lines[l.next:])
	}
	add(l.lines[:l.next])
	return out
}

// Log adds line to the echo's log, if it has one.
func (e *Target) Log(line string) {
	if e.log != nil {
		e.log.Add(line)
	}
}

// ingressOf is the name of the Gateway the request of ctx arrived at.
func (e *Target) ingressOf(ctx context.Context) string {
	if e.ingress == nil {
		return ""
	}
	return e.ingress(ctx)
}
