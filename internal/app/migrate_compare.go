package app

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/ingressnginx"
	"github.com/gwdev/gwdev/engine/table"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/watch"
)

// MigratedFile is the name the converted manifests are loaded under by
// --compare, as if written with -o migrated.yaml.
const MigratedFile = "migrated.yaml"

// Limits of one comparison: the dashboard runs one after every save.
const (
	// MaxCompareRequests is how many generated requests are sent at most;
	// the rest are counted (report.MigrationComparison.LeftOut) and said.
	MaxCompareRequests = 2000
	// compareRequestTimeout bounds each request.
	compareRequestTimeout = 5 * time.Second
)

// compareSide is one side of --compare: a table served on loopback.
type compareSide struct {
	name                string
	srv                 *emulator.Server
	httpPort, httpsPort int
	// addrs is the address each IngressClass (its Ingresses, or the
	// Gateway converted from it) is served on; tls says whether it serves
	// HTTPS.
	addrs map[string]string
	tls   map[string]bool
	rules map[string]*table.RouteRule
	// res is the side's translation.
	res *engine.Result
}

// CompareMigration serves the Ingresses of lr under the ingress-nginx
// emulation and their conversion under the Gateway API, both translated by
// proj (its gwdev.yaml, backends and CRDs), sends both the requests
// generated from the Ingress rules, each to its class, and lists the
// differences. A converted object the folder holds already (the output of
// migrate kept beside the Ingresses) is served in the folder's version.
// It stops early, with what it compared, when ctx ends.
func CompareMigration(ctx context.Context, proj *project.Project, lr *watch.LoadResult, mo ingressnginx.MigrationOptions) (*report.MigrationComparison, error) {
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	ing, err := startCompareSide("ingress-nginx", "127.0.20.1", func(httpPort, httpsPort int) (*engine.Result, map[string]string, error) {
		res := proj.Translate(lr.Snapshot, project.Translation{Now: now, IngressHTTPPort: int32(httpPort), IngressHTTPSPort: int32(httpsPort)})
		classes := map[string]string{}
		for _, g := range res.Table.Gateways {
			if g.Gateway.Kind == "IngressClass" {
				classes[g.Name] = g.Gateway.Name
			}
		}
		return res, classes, nil
	})
	if err != nil {
		return nil, err
	}
	defer ing.close()
	c := &report.MigrationComparison{Limit: MaxCompareRequests}
	gw, err := startCompareSide("gateway-api", "127.0.0.1", func(httpPort, httpsPort int) (*engine.Result, map[string]string, error) {
		res := proj.Translate(lr.Snapshot, project.Translation{Now: now})
		mig := ingressnginx.Migrate(res, mo)
		var buf bytes.Buffer
		if err := writeMigration(&buf, "(compare)", mig); err != nil {
			return nil, nil, err
		}
		conv := proj.LoadBytes(MigratedFile, buf.Bytes())
		c.Dropped, c.Converted = mig.Dropped, conv
		classOf := map[engine.ObjectKey]string{} // converted Gateway → class
		for _, o := range mig.Objects {
			if o.IngressClass != "" {
				classOf[engine.ObjectKey{Kind: "Gateway", Namespace: o.Object.GetNamespace(), Name: o.Object.GetName()}] = o.IngressClass
			}
		}
		var snap *engine.Snapshot
		snap, c.Kept = convertedSnapshot(lr.Snapshot, conv.Snapshot, classOf, int32(httpPort), int32(httpsPort))
		res = proj.Translate(snap, project.Translation{Now: now})
		classes := map[string]string{}
		for _, g := range res.Table.Gateways {
			if class, ok := classOf[engine.ObjectKey{Kind: "Gateway", Namespace: g.Gateway.Namespace, Name: g.Gateway.Name}]; ok && g.Mesh == nil {
				classes[g.Name] = class
			}
		}
		return res, classes, nil
	})
	if err != nil {
		return nil, err
	}
	defer gw.close()
	reqs := compareRequests(ing.res.Objects, ing)
	if len(reqs) > MaxCompareRequests {
		c.LeftOut, reqs = len(reqs)-MaxCompareRequests, reqs[:MaxCompareRequests]
	}
	for _, r := range reqs {
		if ctx.Err() != nil {
			c.LeftOut += len(reqs) - c.Requests
			break
		}
		c.Requests++
		a, b := ing.send(ctx, r), gw.send(ctx, r)
		if d, ok := report.NewCompareDifference(r, a, b); ok {
			c.Differences = append(c.Differences, d)
		}
	}
	return c, nil
}

// convertedSnapshot is what the Gateway side serves: the folder without
// its Ingresses and IngressClasses, which the converted objects replace,
// plus the converted objects the folder does not hold itself (kept lists
// those it does: its versions win). The converted Gateways (classOf) are
// copies whose listeners moved to the side's ports (TLS ones to https).
func convertedSnapshot(folder, conv *engine.Snapshot, classOf map[engine.ObjectKey]string, httpPort, httpsPort int32) (*engine.Snapshot, []engine.ObjectKey) {
	out := &engine.Snapshot{Sources: map[engine.ObjectKey]engine.Source{}}
	var kept []engine.ObjectKey
	inFolder := map[engine.ObjectKey]bool{}
	add := func(k engine.ObjectKey, o metav1.Object, from *engine.Snapshot) {
		if g, ok := o.(*gwv1.Gateway); ok && classOf[k] != "" {
			g = g.DeepCopy()
			for i := range g.Spec.Listeners {
				l := &g.Spec.Listeners[i]
				if l.TLS != nil {
					l.Port = gwv1.PortNumber(httpsPort)
				} else {
					l.Port = gwv1.PortNumber(httpPort)
				}
			}
			o = g
		}
		out.AddObject(o)
		if src, ok := from.LookupSource(k); ok {
			out.Sources[k] = src
		}
	}
	folder.Each(func(k engine.ObjectKey, o metav1.Object) {
		switch o.(type) {
		case *networkingv1.Ingress, *networkingv1.IngressClass:
			return
		}
		inFolder[k] = true
		add(k, o, folder)
	})
	conv.Each(func(k engine.ObjectKey, o metav1.Object) {
		if inFolder[k] {
			kept = append(kept, k)
			return
		}
		add(k, o, conv)
	})
	return out, kept
}

// sideTranslation translates a side with its ports and says which table
// Gateways it serves, by name, with the IngressClass each stands for.
type sideTranslation func(httpPort, httpsPort int) (*engine.Result, map[string]string, error)

// startCompareSide translates with free ports on portAddr and serves the
// table's Gateways the translation names.
func startCompareSide(name, portAddr string, translate sideTranslation) (*compareSide, error) {
	// A port found free can be taken before it is bound: three tries.
	var err error
	for range 3 {
		var s *compareSide
		if s, err = startCompareSideOnce(name, portAddr, translate); err == nil {
			return s, nil
		}
	}
	return nil, err
}

func startCompareSideOnce(name, portAddr string, translate sideTranslation) (*compareSide, error) {
	httpPort, err := freeTCPPort(portAddr)
	if err != nil {
		return nil, err
	}
	httpsPort, err := freeTCPPort(portAddr)
	if err != nil {
		return nil, err
	}
	res, classes, err := translate(httpPort, httpsPort)
	if err != nil {
		return nil, err
	}
	s := &compareSide{name: name, httpPort: httpPort, httpsPort: httpsPort, res: res,
		addrs: map[string]string{}, tls: map[string]bool{}, rules: map[string]*table.RouteRule{}}
	// Each side serves only its own: the ingress-nginx classes, or the
	// converted Gateways (other Gateways of the folder stay out of both).
	served := &table.Table{}
	for _, g := range res.Table.Gateways {
		class, ok := classes[g.Name]
		if !ok || g.Address == "" {
			continue
		}
		served.Gateways = append(served.Gateways, g)
		s.addrs[class] = g.Address
		for _, p := range g.Ports {
			for _, l := range p.Listeners {
				s.tls[class] = s.tls[class] || l.TLS != nil
				for _, vh := range l.VirtualHosts {
					for _, r := range vh.Rules {
						s.rules[r.Name] = r
					}
				}
			}
		}
	}
	if len(served.Gateways) == 0 {
		return nil, fmt.Errorf("%s: nothing to serve", name)
	}
	// Both sides stand for one gwdev: one Via name, so that what their
	// backends receive differs only where the two configurations do.
	s.srv = emulator.New(emulator.Config{Via: "compare"})
	if err := s.srv.Apply(served).Err(); err != nil {
		s.close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// freeTCPPort asks the kernel for a port on addr that nothing listens on.
func freeTCPPort(addr string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return 0, fmt.Errorf("finding a free port on %s: %w", addr, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *compareSide) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Close(ctx)
}

// send sends r to the side's address for r's class and describes the
// answer with the side's own ports replaced by the well-known ones, so
// both sides' Locations compare.
func (s *compareSide) send(ctx context.Context, r report.CompareRequest) report.CompareAnswer {
	addr, ok := s.addrs[r.Class]
	if !ok {
		return report.CompareAnswer{Status: -1, Error: s.name + " serves no Gateway for IngressClass " + r.Class}
	}
	scheme, port := "http", s.httpPort
	if r.HTTPS {
		scheme, port = "https", s.httpsPort
	}
	if r.HTTPS && !s.tls[r.Class] {
		return report.CompareAnswer{Status: -1, Error: s.name + " serves no HTTPS for IngressClass " + r.Class}
	}
	ctx, cancel := context.WithTimeout(ctx, compareRequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", scheme+"://"+net.JoinHostPort(addr, strconv.Itoa(port))+r.Path, nil)
	if err != nil {
		return report.CompareAnswer{Status: -1, Error: err.Error()}
	}
	req.Host = r.Host
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	probe := req.Clone(context.Background())
	if r.HTTPS {
		probe.TLS = &tls.ConnectionState{ServerName: r.Host}
	}
	tr := explainTrace(s.srv, addr, int32(port), probe)
	c := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{ServerName: r.Host, InsecureSkipVerify: true}}, //nolint:gosec // comparing routing, not certificates
	}
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		return report.CompareAnswer{Status: -1, Error: err.Error()}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	a := report.CompareAnswer{Status: resp.StatusCode, Location: s.wellKnownPorts(resp.Header.Get("Location")), Rule: tr.Rule, Source: tr.Source}
	var echo struct {
		Namespace, Service, Path, Host string
		Headers                        map[string][]string
	}
	switch {
	case json.Unmarshal(body, &echo) == nil && echo.Service != "":
		a.Path, a.Host = echo.Path, echo.Host
		a.Services = echo.Namespace + "/" + echo.Service
		a.Added = addedHeaders(echo.Headers, r.Headers)
	case tr.Service != "":
		// A backend of the user's (gwdev.yaml backends:) answered: the
		// trace names its Service; what it saw is its own.
		a.Services, _, _ = strings.Cut(tr.Service, ":")
	}
	if rule := s.rules[tr.Rule]; rule != nil && len(rule.Backends) > 1 && a.Services != "" {
		a.Services = weightedServices(rule.Backends)
	}
	return a
}

// clientHeaders are request headers Go's client adds by itself.
var clientHeaders = map[string]bool{"User-Agent": true, "Accept-Encoding": true}

// addedHeaders are the headers the backend saw (seen, as the echo backend
// reports them) that the client did not send, as "Name: value; …".
func addedHeaders(seen map[string][]string, sent map[string]string) string {
	var out []string
	for name, vs := range seen {
		name = http.CanonicalHeaderKey(name)
		if clientHeaders[name] {
			continue
		}
		for _, v := range vs {
			if sv, ok := sent[name]; ok && sv == v {
				continue
			}
			out = append(out, name+": "+v)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// explainTrace is the side's decision for req (rule and source).
func explainTrace(srv *emulator.Server, addr string, port int32, req *http.Request) emulator.Trace {
	if t := srv.Explain(addr, port, req); t != nil {
		return *t
	}
	return emulator.Trace{}
}

// weightedServices names the backends of a split with their shares.
func weightedServices(bs []*table.Backend) string {
	total := int32(0)
	for _, b := range bs {
		total += b.Weight
	}
	var parts []string
	for _, b := range bs {
		if b.Weight > 0 && total > 0 {
			parts = append(parts, fmt.Sprintf("%s/%s %d%%", b.Service.Namespace, b.Service.Name, b.Weight*100/total))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// wellKnownPorts writes the side's ports in a Location as 80 and 443,
// which leaves them out.
func (s *compareSide) wellKnownPorts(loc string) string {
	u, err := url.Parse(loc)
	if err != nil || u.Host == "" {
		return loc
	}
	switch {
	case u.Port() == strconv.Itoa(s.httpPort) && u.Scheme == "http", u.Port() == strconv.Itoa(s.httpsPort) && u.Scheme == "https":
		u.Host = u.Hostname()
	case u.Port() == strconv.Itoa(s.httpsPort) || u.Port() == strconv.Itoa(s.httpPort):
		p := "80"
		if u.Port() == strconv.Itoa(s.httpsPort) {
			p = "443"
		}
		u.Host = net.JoinHostPort(u.Hostname(), p)
	}
	return u.String()
}

// compareRequests generates the requests from the Ingress rules of every
// class the ingress-nginx side serves (snap: its translation's objects,
// whose status names each Ingress's class address): each host and path (for a regex, its literal prefix and an example), with and
// without a trailing slash, upper case, longer, with dot segments and a
// double slash; canary headers and cookies; over HTTP and, when the class
// serves TLS, HTTPS.
func compareRequests(snap *engine.Snapshot, ing *compareSide) []report.CompareRequest {
	classAt := map[string]string{}
	for class, addr := range ing.addrs {
		classAt[addr] = class
	}
	var out []report.CompareRequest
	seen := map[string]bool{}
	add := func(r report.CompareRequest) {
		k := fmt.Sprint(r.Class, r.HTTPS, r.Host, r.Path, r.Headers)
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	for _, in := range snap.Ingresses {
		lb := in.Status.LoadBalancer.Ingress
		if len(in.Spec.Rules) == 0 || len(lb) == 0 || classAt[lb[0].IP] == "" {
			continue // not served as ingress-nginx: nothing to compare
		}
		class := classAt[lb[0].IP]
		key := engine.ObjectKey{Kind: "Ingress", Namespace: in.Namespace, Name: in.Name}
		headers := canaryHeaders(in.Annotations)
		for i, rule := range in.Spec.Rules {
			host := rule.Host
			if host == "" {
				host = "any-host.example"
			}
			host = strings.Replace(host, "*", "wildcard", 1)
			if rule.HTTP == nil {
				continue
			}
			for j, p := range rule.HTTP.Paths {
				src := snap.SourceOf(key).At("spec.rules[" + strconv.Itoa(i) + "].http.paths[" + strconv.Itoa(j) + "]")
				for _, path := range PathVariants(p.Path) {
					for _, https := range []bool{false, true} {
						if https && !ing.tls[class] {
							continue
						}
						add(report.CompareRequest{Class: class, HTTPS: https, Host: host, Path: path, From: src, Ingress: key})
						for _, h := range headers {
							add(report.CompareRequest{Class: class, HTTPS: https, Host: host, Path: path, Headers: h, From: src, Ingress: key})
						}
					}
				}
			}
		}
	}
	return out
}

// PathVariants are the request paths made from an Ingress path.
func PathVariants(path string) []string {
	base := path
	if re, err := syntax.Parse(path, syntax.Perl); err == nil && strings.ContainsAny(path, `()[]{}*+?|\^$`) {
		prefix, _ := literalPrefix(re)
		base = prefix
		if base == "" || base[0] != '/' {
			base = "/" + base
		}
	}
	if base == "" {
		base = "/"
	}
	vs := []string{base, base + "x", base + "/x", strings.ToUpper(base)}
	if strings.HasSuffix(base, "/") && len(base) > 1 {
		vs = append(vs, strings.TrimSuffix(base, "/"))
	} else {
		vs = append(vs, base+"/")
	}
	if i := strings.LastIndexByte(strings.TrimSuffix(base, "/"), '/'); i >= 0 && len(base) > 1 {
		vs = append(vs, base[:i]+"/."+base[i:], base[:i]+"/"+base[i:], base[:i]+"/z/.."+base[i:])
	}
	return vs
}

// literalPrefix is the literal text every match of re starts with.
func literalPrefix(re *syntax.Regexp) (string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return string(re.Rune), true
	case syntax.OpConcat:
		var b strings.Builder
		for _, s := range re.Sub {
			p, whole := literalPrefix(s)
			b.WriteString(p)
			if !whole {
				return b.String(), false
			}
		}
		return b.String(), true
	case syntax.OpBeginLine, syntax.OpBeginText:
		return "", true
	}
	return "", false
}

// canaryHeaders are the headers and cookies that steer a canary Ingress's
// requests (none for other Ingresses).
func canaryHeaders(ann map[string]string) []map[string]string {
	p := ingressnginx.AnnotationPrefix
	if ann[p+"canary"] != "true" {
		return nil
	}
	var out []map[string]string
	if h := ann[p+"canary-by-header"]; h != "" {
		if v := ann[p+"canary-by-header-value"]; v != "" {
			out = append(out, map[string]string{h: v})
		}
		out = append(out, map[string]string{h: "always"}, map[string]string{h: "never"})
	}
	if c := ann[p+"canary-by-cookie"]; c != "" {
		out = append(out, map[string]string{"Cookie": c + "=always"}, map[string]string{"Cookie": c + "=never"})
	}
	return out
}
