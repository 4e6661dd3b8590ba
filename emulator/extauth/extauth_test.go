package extauth

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/gwdev/gwdev/engine/table"
)

// upstream is an Upstream to the test server at srv.
func upstream(srv *httptest.Server) Upstream {
	return Upstream{Service: "default/auth", Scheme: "http", Addr: strings.TrimPrefix(srv.URL, "http://"),
		RoundTrip: http.DefaultTransport.RoundTrip, Failure: func(err error) string { return "unreachable: " + err.Error() },
		Timeout: 5 * time.Second}
}

// An HTTP auth backend's answers become decisions: a 401 is passed on as
// is, a 200 allows with its headers (sorted; those describing the answer
// itself skipped), and the check request carries the prefix, Authorization
// and the allowed headers only.
func TestCheckHTTPDecides(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("Www-Authenticate", "Basic")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, "who are you")
			return
		}
		w.Header().Set("X-User", "ann")
		w.Header().Set("X-Auth", "ok")
	}))
	defer srv.Close()
	a := &table.ExternalAuth{Name: "default/r/0", Protocol: "HTTP", PathPrefix: "/check", AllowedHeaders: []string{"X-Keep"}}

	r := httptest.NewRequest(http.MethodGet, "http://app.example/a?b=c", nil)
	r.Header.Set("X-Keep", "1")
	r.Header.Set("X-Drop", "1")
	d := Check(a, upstream(srv), r, nil)
	if d.Kind != Deny || d.Status != http.StatusUnauthorized || string(d.Body) != "who are you" || d.Header.Get("Www-Authenticate") != "Basic" {
		t.Fatalf("denial: %+v", d)
	}
	if got.URL.Path != "/check/a" || got.URL.RawQuery != "b=c" || got.Host != "app.example" || got.Header.Get("X-Keep") != "1" || got.Header.Get("X-Drop") != "" {
		t.Errorf("check request: %s %s host %s headers %v", got.Method, got.URL, got.Host, got.Header)
	}

	r.Header.Set("Authorization", "Basic x")
	d = Check(a, upstream(srv), r, nil)
	if d.Kind != Allow {
		t.Fatalf("allow: %+v", d)
	}
	var names []string
	for _, op := range d.Add {
		names = append(names, op.Name)
	}
	if !slices.Equal(names, []string{"X-Auth", "X-User"}) {
		t.Errorf("headers for the backend: %v, want X-Auth, X-User (Content-Length, Date skipped)", names)
	}

	a.AllowedResponseHeaders = []string{"X-User"}
	if d = Check(a, upstream(srv), r, nil); len(d.Add) != 1 || d.Add[0].Name != "X-User" {
		t.Errorf("allowedResponseHeaders X-User: %+v", d.Add)
	}
}

// gwdev never fails open: an auth backend that cannot be asked, or whose
// call fails, refuses with ErrorStatus and says why.
func TestCheckFailsClosed(t *testing.T) {
	a := &table.ExternalAuth{Name: "default/r/0", Protocol: "GRPC"}
	r := httptest.NewRequest(http.MethodGet, "http://app.example/", nil)
	d := Check(a, Upstream{Service: "default/auth", Why: "has no endpoints"}, r, nil)
	if d.Kind != Refuse || d.Status != ErrorStatus || !strings.Contains(d.Reason, "has no endpoints") || d.Filter != "ExternalAuth: default/auth failed, denied" {
		t.Errorf("no endpoints: %+v", d)
	}
	up := Upstream{Service: "default/auth", Scheme: "http", Addr: "auth:80", Timeout: time.Second,
		RoundTrip: func(*http.Request) (*http.Response, error) { return nil, errors.New("refused") },
		Failure:   func(err error) string { return "unreachable: " + err.Error() }}
	if d := Check(a, up, r, nil); d.Kind != Refuse || !strings.Contains(d.Reason, "unreachable: refused") {
		t.Errorf("failed call: %+v", d)
	}
}

// A body over forwardBody.maxSize is refused with 413 before any check.
func TestReadBodyRefusesTooLarge(t *testing.T) {
	a := &table.ExternalAuth{Name: "default/r/0", MaxBodySize: 4}
	r := httptest.NewRequest(http.MethodPost, "http://app.example/", strings.NewReader("12345"))
	r.ContentLength = -1
	if _, d := ReadBody(a, r); d == nil || d.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("5 bytes over 4: %+v", d)
	}
	r = httptest.NewRequest(http.MethodPost, "http://app.example/", strings.NewReader("1234"))
	if buf, d := ReadBody(a, r); d != nil || string(buf) != "1234" {
		t.Fatalf("4 bytes: %q %+v", buf, d)
	}
}

// Envoy's append actions, the deprecated append field first, and a denial
// without an HTTP status (403).
func TestGRPCAnswer(t *testing.T) {
	op := func(k, v string, act corev3.HeaderValueOption_HeaderAppendAction, ap *wrapperspb.BoolValue) *corev3.HeaderValueOption {
		return &corev3.HeaderValueOption{Header: &corev3.HeaderValue{Key: k, Value: v}, AppendAction: act, Append: ap}
	}
	ops := grpcHeaders([]*corev3.HeaderValueOption{
		op("x-set", "s", corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD, nil),
		op("x-append", "a", corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD, wrapperspb.Bool(true)),
		op("x-absent", "n", corev3.HeaderValueOption_ADD_IF_ABSENT, nil),
		op("x-exists", "e", corev3.HeaderValueOption_OVERWRITE_IF_EXISTS, nil),
		op("content-type", "text/plain", corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD, nil),
	})
	h := http.Header{"X-Set": {"client"}, "X-Append": {"client"}, "X-Absent": {"client"}}
	Apply(h, ops)
	want := http.Header{"X-Set": {"s"}, "X-Append": {"client", "a"}, "X-Absent": {"client"}}
	if len(h) != len(want) {
		t.Errorf("headers %v, want %v", h, want)
	}
	for k, v := range want {
		if !slices.Equal(h[k], v) {
			t.Errorf("%s: %q, want %q", k, h[k], v)
		}
	}

	d := denyGRPC(&table.ExternalAuth{Name: "default/r/0"}, Upstream{Service: "default/auth"},
		&authv3.CheckResponse{Status: &statuspb.Status{Code: int32(codes.PermissionDenied), Message: "no"}})
	if d.Kind != Deny || d.Status != http.StatusForbidden || GRPCCode(d.Status) != codes.PermissionDenied {
		t.Errorf("denial without a status: %+v", d)
	}
}
