package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	pb "sigs.k8s.io/gateway-api-conformance-images/echo-basic/grpcechoserver"

	"github.com/gwdev/gwdev/emulator"
)

// meshClient plays the `client` command of the mesh echo image (Istio's
// echo client), which the mesh tests exec inside a Pod. It resolves the
// host the way cluster DNS does from the Pod's namespace (name,
// name.namespace, name.namespace.svc[.cluster.local]) and connects where a
// mesh would send the request: to gwdev's frontend of the Service for that
// namespace (a namespace with consumer routes has its own), or, when no
// mesh route binds the Service, to one of its Pods (kube-proxy's choice);
// a request to a Pod IP goes to the Pod.
// It prints each answer as the echo client does ("[i] Key=value" lines,
// answers separated by a blank line), which the suite parses.
type meshClient struct {
	api client.Client
	srv *emulator.Server
}

// meshRequest is one parsed `client` command.
type meshRequest struct {
	u       *url.URL
	method  string
	headers [][2]string
	count   int
}

func parseMeshCommand(cmd []string) (*meshRequest, error) {
	if len(cmd) < 2 || cmd[0] != "client" {
		return nil, fmt.Errorf("gwdev harness: only `client URL [flags]` runs in an echo Pod, not %q", cmd)
	}
	u, err := url.Parse(cmd[1])
	if err != nil {
		return nil, err
	}
	r := &meshRequest{u: u, method: http.MethodGet, count: 1}
	for i := 2; i < len(cmd); i++ {
		a := cmd[i]
		switch {
		case strings.HasPrefix(a, "--method="):
			r.method = strings.TrimPrefix(a, "--method=")
		case strings.HasPrefix(a, "--count="):
			if r.count, err = strconv.Atoi(strings.TrimPrefix(a, "--count=")); err != nil || r.count < 1 {
				return nil, fmt.Errorf("bad %s", a)
			}
		case a == "-H" && i+1 < len(cmd):
			k, v, _ := strings.Cut(cmd[i+1], ":")
			r.headers = append(r.headers, [2]string{k, v})
			i++
		default:
			return nil, fmt.Errorf("gwdev harness: client flag %q is not implemented", a)
		}
	}
	return r, nil
}

func (m *meshClient) exec(ctx context.Context, ns, pod string, cmd []string) (string, error) {
	r, err := parseMeshCommand(cmd)
	if err != nil {
		return "", err
	}
	addr, err := m.resolve(ctx, ns, r.u)
	if err != nil {
		return "", err
	}
	var out []string
	for i := range r.count {
		var lines []string
		if r.u.Scheme == "grpc" {
			lines, err = grpcCall(ctx, addr, r)
		} else {
			lines, err = httpCall(ctx, addr, r)
		}
		if err != nil {
			return "", err
		}
		for j := range lines {
			lines[j] = fmt.Sprintf("[%d] %s", i, lines[j])
		}
		out = append(out, strings.Join(lines, "\n"))
	}
	return strings.Join(out, "\n\n") + "\n", nil
}

// resolve finds the address a request to u from namespace ns goes to.
func (m *meshClient) resolve(ctx context.Context, ns string, u *url.URL) (string, error) {
	port := u.Port()
	if port == "" {
		if u.Scheme != "http" {
			return "", fmt.Errorf("%s: no port", u)
		}
		port = "80"
	}
	if net.ParseIP(u.Hostname()) != nil {
		return net.JoinHostPort(u.Hostname(), port), nil // a Pod IP: no Service, no mesh route
	}
	labelsOf := strings.Split(strings.TrimSuffix(u.Hostname(), ".cluster.local"), ".")
	name, svcNS := labelsOf[0], ns
	if len(labelsOf) > 1 {
		svcNS = labelsOf[1]
	}
	var svc corev1.Service
	if err := m.api.Get(ctx, types.NamespacedName{Namespace: svcNS, Name: name}, &svc); err != nil {
		return "", fmt.Errorf("resolving %s: %w", u.Hostname(), err)
	}
	if a := m.frontend(svcNS, name, ns); a != "" {
		return net.JoinHostPort(a, port), nil
	}
	return m.podAddress(ctx, &svc, port)
}

// frontend is gwdev's mesh address of Service svcNS/name for clients in
// ns ("": no mesh route binds the Service).
func (m *meshClient) frontend(svcNS, name, ns string) string {
	t := m.srv.Table()
	if t == nil {
		return ""
	}
	addr := ""
	for _, g := range t.Gateways {
		if g.Mesh == nil || g.Mesh.Service.Namespace != svcNS || g.Mesh.Service.Name != name {
			continue
		}
		switch g.Mesh.ClientNamespace {
		case ns:
			return g.Address
		case "":
			addr = g.Address
		}
	}
	return addr
}

// podAddress picks a Ready Pod the Service selects, at the target port of
// the Service port.
func (m *meshClient) podAddress(ctx context.Context, svc *corev1.Service, port string) (string, error) {
	target := port
	for _, sp := range svc.Spec.Ports {
		if strconv.Itoa(int(sp.Port)) == port && sp.TargetPort.IntVal != 0 {
			target = strconv.Itoa(int(sp.TargetPort.IntVal))
		}
	}
	var pods corev1.PodList
	if err := m.api.List(ctx, &pods, client.InNamespace(svc.Namespace), client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(svc.Spec.Selector)}); err != nil {
		return "", err
	}
	var ips []string
	for _, p := range pods.Items {
		if p.Status.PodIP != "" && len(svc.Spec.Selector) > 0 {
			ips = append(ips, p.Status.PodIP)
		}
	}
	if len(ips) == 0 {
		return "", fmt.Errorf("Service %s/%s has no ready Pod", svc.Namespace, svc.Name)
	}
	return net.JoinHostPort(ips[rand.IntN(len(ips))], target), nil
}

// httpCall sends one HTTP request and renders the echo client's lines.
func httpCall(ctx context.Context, addr string, r *meshRequest) ([]string, error) {
	u := *r.u
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), nil)
	if err != nil {
		return nil, err
	}
	for _, h := range r.headers {
		if strings.EqualFold(h[0], "host") {
			req.Host = h[1]
			continue
		}
		req.Header.Add(h[0], h[1])
	}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
	}}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	lines := []string{"Url=" + u.String(), "Method=" + r.method, "StatusCode=" + strconv.Itoa(resp.StatusCode), "Host=" + req.Host}
	var echo struct {
		Headers map[string][]string `json:"headers"`
		Pod     string              `json:"pod"`
	}
	if json.Unmarshal(body, &echo) == nil && echo.Pod != "" {
		lines = append(lines, "Hostname="+echo.Pod)
		for _, k := range sortedKeys(echo.Headers) {
			for _, v := range echo.Headers[k] {
				lines = append(lines, "RequestHeader="+k+":"+v)
			}
		}
	}
	for _, k := range sortedKeys(resp.Header) {
		for _, v := range resp.Header[k] {
			lines = append(lines, "ResponseHeader="+k+":"+v)
		}
	}
	return lines, nil
}

// grpcCall calls the echo's Echo method once over h2c, as the echo client
// does for grpc:// URLs.
func grpcCall(ctx context.Context, addr string, r *meshRequest) ([]string, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority(r.u.Host))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var kv []string
	for _, h := range r.headers {
		kv = append(kv, strings.ToLower(h[0]), h[1])
	}
	cctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(ctx, kv...), 10*time.Second)
	defer cancel()
	resp, err := pb.NewGrpcEchoClient(conn).Echo(cctx, &pb.EchoRequest{})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("gRPC Echo to %s", addr), err)
	}
	lines := []string{"Url=" + r.u.String(), "StatusCode=200", "Host=" + r.u.Host, "Hostname=" + resp.GetAssertions().GetContext().GetPod()}
	for _, h := range resp.GetAssertions().GetHeaders() {
		lines = append(lines, "RequestHeader="+h.GetKey()+":"+h.GetValue())
	}
	return lines, nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
