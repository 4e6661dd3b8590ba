package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	pb "sigs.k8s.io/gateway-api-conformance-images/echo-basic/grpcechoserver"
)

// The addresses gwdev gives the mesh sample's Service frontends: by
// namespace/name, then one per namespace with consumer routes.
const (
	meshRatings         = "127.0.10.1"
	meshReviews         = "127.0.10.2"
	meshReviewsFrontend = "127.0.10.3"
)

// meshGet sends GET url and returns the echo's service, the request
// headers it saw and the response.
func meshGet(t *testing.T, url string, hdr ...string) (string, http.Header, *http.Response) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var echo struct {
		Service string      `json:"service"`
		Headers http.Header `json:"headers"`
	}
	if err := json.Unmarshal(body, &echo); err != nil {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	return echo.Service, echo.Headers, resp
}

// TestSampleMesh serves samples/mesh and sends requests to the Services'
// frontend addresses with net/http: the producer route's header match and
// 90/10 split, the consumer route on the consumer namespace's address, the
// port no route binds going to the Service itself; and the mesh GRPCRoute
// with grpc-go.
func TestSampleMesh(t *testing.T) {
	p1, p2, pg := freePort(t), freePort(t), freePort(t)
	out := upSampleWith(t, "mesh", map[int]int{8080: p1, 8081: p2, 9090: pg}, &upOptions{debounce: 10 * time.Millisecond, accessLog: "-"})
	for _, want := range []string{"mesh/shop/reviews port " + strconv.Itoa(p1) + " (HTTP) on " + meshReviews,
		"mesh/shop/reviews/from/frontend port " + strconv.Itoa(p1) + " (HTTP) on " + meshReviewsFrontend} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("up output lacks %q:\n%s", want, out.String())
		}
	}
	reviews := "http://" + meshReviews + ":" + strconv.Itoa(p1) + "/reviews/1"

	counts := map[string]int{}
	for range 200 {
		svc, _, resp := meshGet(t, reviews)
		if resp.Header.Get("X-Mesh-Route") != "reviews-split" {
			t.Fatalf("producer route: X-Mesh-Route %q", resp.Header.Get("X-Mesh-Route"))
		}
		counts[svc]++
	}
	if counts["reviews-v1"] < 150 || counts["reviews-v2"] < 2 || counts["reviews-v1"]+counts["reviews-v2"] != 200 {
		t.Errorf("90/10 split: %v", counts)
	}
	if svc, _, resp := meshGet(t, reviews, "x-canary", "true"); svc != "reviews-v2" || resp.Header.Get("X-Mesh-Route") != "" {
		t.Errorf("x-canary: service %s, X-Mesh-Route %q", svc, resp.Header.Get("X-Mesh-Route"))
	}
	// The consumer namespace's address: its own route, not the producer's.
	svc, hdr, resp := meshGet(t, "http://"+meshReviewsFrontend+":"+strconv.Itoa(p1)+"/")
	if svc != "reviews-v2" || hdr.Get("X-Client-Namespace") != "frontend" || resp.Header.Get("X-Mesh-Route") != "" {
		t.Errorf("consumer route: service %s, X-Client-Namespace %q, X-Mesh-Route %q", svc, hdr.Get("X-Client-Namespace"), resp.Header.Get("X-Mesh-Route"))
	}
	// Port 8081 is bound by no route: the Service itself answers.
	if svc, _, resp := meshGet(t, "http://"+meshReviews+":"+strconv.Itoa(p2)+"/"); svc != "reviews" || resp.Header.Get("X-Mesh-Route") != "" {
		t.Errorf("unrouted port: service %s, X-Mesh-Route %q", svc, resp.Header.Get("X-Mesh-Route"))
	}

	// The access log (one trace per request) names the mesh frontend and
	// the rule that served each request.
	for _, want := range []string{`"gateway":"mesh/shop/reviews/from/frontend"`, `"rule":"httproute/frontend/reviews-pinned/rule/0/match/0"`,
		`"rule":"mesh/shop/reviews/port/` + strconv.Itoa(p2) + `/service"`} {
		waitForOutput(t, out, want)
	}

	conn, err := grpc.NewClient(meshRatings+":"+strconv.Itoa(pg), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := pb.NewGrpcEchoClient(conn)
	call := func(kv ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := c.Echo(metadata.AppendToOutgoingContext(ctx, kv...), &pb.EchoRequest{})
		if err != nil {
			t.Fatalf("Echo %v: %v\n%s", kv, err, out.String())
		}
		return resp.GetAssertions().GetContext().GetServiceName()
	}
	if got := call(); got != "ratings" {
		t.Errorf("gRPC Echo → %s, want ratings", got)
	}
	if got := call("x-canary", "true"); got != "ratings-v2" {
		t.Errorf("gRPC Echo with x-canary → %s, want ratings-v2", got)
	}
}
