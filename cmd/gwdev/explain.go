package main

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// explainOptions are the flags of `gwdev explain`.
type explainOptions struct {
	dir      string
	method   string
	headers  []string
	gateway  string
	output   string
	backends []string
	// sni is the TLS server name of an https URL ("" : the URL's host).
	sni string
	// profiles are --profile CLASS=PROFILE flags (profiles.go).
	profiles []string
}

func newExplainCmd() *cobra.Command {
	o := &explainOptions{}
	cmd := &cobra.Command{
		Use:   "explain [DIR] URL",
		Short: "Say what gwdev's data plane would do with a request, without sending it",
		Long: `explain translates the manifests in DIR (or --dir; default: the current directory) and runs the
data plane's routing decision for one request: which Gateway listener takes it, which
virtual host, which route rule and match (or why nothing matched), which filters apply,
and which backend would answer and why. It agrees with what ` + "`gwdev up`" + ` serves.

The URL's host is the Host header and its port the listener port (80 for http, 443 for
https when absent). Example:

  gwdev explain samples/basic -H 'X-Canary: true' http://app.example.com:8080/api/users`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 { // explain DIR URL, as the other commands take DIR
				if cmd.Flags().Changed("dir") && o.dir != args[0] {
					return fmt.Errorf("two folders given: %s and --dir %s", args[0], o.dir)
				}
				o.dir, args = args[0], args[1:]
			}
			return o.run(cmd.OutOrStdout(), args[0])
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.dir, "dir", "d", ".", "the folder of manifests (the same as giving DIR)")
	f.StringVarP(&o.method, "request", "X", "GET", "request method")
	f.StringArrayVarP(&o.headers, "header", "H", nil, "request header 'Name: value' (repeatable)")
	f.StringVar(&o.gateway, "gateway", "", "namespace/name of the Gateway (default: any Gateway with a listener on the port)")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	f.StringArrayVar(&o.backends, "backend", nil, "as for up: namespace/service:port=host:port")
	f.StringVar(&o.sni, "sni", "", "TLS server name for an https URL (default: the URL's host); a Host header of another listener gets 421")
	f.StringArrayVar(&o.profiles, "profile", nil, profileFlagUsage)
	return cmd
}

func (o *explainOptions) run(out io.Writer, rawURL string) error {
	if o.output != "text" && o.output != "json" {
		return fmt.Errorf("unknown output format %q (want text or json)", o.output)
	}
	req, port, err := o.request(rawURL)
	if err != nil {
		return err
	}
	cfg, _, err := loadProjectConfig(o.dir)
	if err != nil {
		return err
	}
	mappings, _, err := backendMappings(cfg, o.backends)
	if err != nil {
		return err
	}
	profiles, ycCerts, err := profileOptions(cfg, o.dir, o.profiles)
	if err != nil {
		return err
	}
	loader, err := newLoader()
	if err != nil {
		return err
	}
	lr := loader.LoadDir(o.dir)
	res := engine.Translate(lr.Snapshot, engine.Options{BackendMappings: mappings, Now: metav1.NewTime(time.Now().UTC()),
		Profiles: profiles, YCCertificates: ycCerts})
	addr := ""
	if o.gateway != "" {
		for _, g := range res.Table.Gateways {
			if g.Gateway.Namespace+"/"+g.Gateway.Name == o.gateway {
				addr = g.Address
			}
		}
		if addr == "" {
			return fmt.Errorf("--gateway %s: no such Gateway is served (see gwdev check %s)", o.gateway, o.dir)
		}
	}
	tr := emulator.Explain(res.Table, addr, port, req)
	if o.output == "json" {
		b, err := json.MarshalIndent(tr, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\n", b)
		return nil
	}
	printExplain(out, req, port, tr)
	printOutranked(out, res, tr)
	printExplainPolicies(out, res, tr)
	if tr.Rule == "" && tr.Status != http.StatusMisdirectedRequest {
		for _, h := range noMatchHints(res, req.Host, port) {
			fmt.Fprintf(out, "  hint: %s\n", h)
		}
	}
	if len(lr.Problems) > 0 {
		fmt.Fprintf(out, "\nnote: %s did not load; run gwdev check %s\n", plural(len(lr.Problems), "file problem"), o.dir)
	}
	return nil
}

// request builds the request to explain and the listener port.
func (o *explainOptions) request(rawURL string) (*http.Request, int32, error) {
	if !strings.Contains(rawURL, "://") {
		rawURL = "http://" + rawURL
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, 0, fmt.Errorf("URL %q: %w", rawURL, err)
	}
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		port, err = strconv.Atoi(p)
		if err != nil || port < 1 || port > 65535 {
			return nil, 0, fmt.Errorf("URL %q: bad port", rawURL)
		}
	}
	req, err := http.NewRequest(strings.ToUpper(o.method), u.String(), nil)
	if err != nil {
		return nil, 0, err
	}
	req.Host = u.Hostname()
	req.RemoteAddr = net.JoinHostPort("127.0.0.1", "50000")
	if u.Scheme == "https" {
		sni := u.Hostname()
		if o.sni != "" {
			sni = o.sni
		}
		req.TLS = &tls.ConnectionState{ServerName: sni}
	}
	for _, h := range o.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return nil, 0, fmt.Errorf("header %q: want 'Name: value'", h)
		}
		if strings.EqualFold(strings.TrimSpace(name), "host") {
			req.Host = strings.TrimSpace(value)
			continue
		}
		req.Header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return req, int32(port), nil
}

func printExplain(out io.Writer, req *http.Request, port int32, t *emulator.Trace) {
	// The trace's path, not the request's: it is redacted (emulator/redact.go).
	fmt.Fprintf(out, "%s %s (Host %s, port %d)\n", req.Method, t.Path, req.Host, port)
	step := func(label, value string) {
		if value != "" {
			fmt.Fprintf(out, "  %-14s %s\n", label+":", value)
		}
	}
	step("gateway", t.Gateway)
	step("sni", t.SNI)
	step("listener", t.Listener)
	step("virtual host", t.VirtualHost)
	step("route", t.Route)
	step("rule", t.Rule)
	step("source", t.Source)
	for i, f := range t.Filters {
		label := ""
		if i == 0 {
			label = "filters"
		}
		if label == "" {
			fmt.Fprintf(out, "  %-14s %s\n", "", f)
		} else {
			step(label, f)
		}
	}
	if len(t.Candidates) > 0 {
		step("candidates", strings.Join(t.Candidates, ", "))
	}
	step("backend", t.Backend)
	step("service", t.Service)
	if t.Target != "" {
		step("target", t.Target+" ("+t.Why+")")
	}
	step("upstream", t.Upstream)
	step("client cert", t.BackendClientCert)
	step("location", t.Location)
	switch {
	case t.Status != 0:
		step("answer", fmt.Sprintf("%d %s", t.Status, http.StatusText(t.Status)))
	case t.Backend != "":
		step("answer", "from the backend")
	}
	step("why", t.Reason)
}

// noMatchHints explains, when nothing took the request, which routes would
// have matched the host and where they are attached instead (or why they
// are not attached at all).
func noMatchHints(res *engine.Result, host string, port int32) []string {
	var hints []string
	consider := func(key engine.ObjectKey, hostnames []string, parents []gwv1.RouteParentStatus) {
		if rs := res.Routes[key]; rs != nil && len(rs.Places) > 0 {
			for _, pl := range rs.Places {
				if table.HostnameMatches(pl.Hostname, host) {
					hints = append(hints, fmt.Sprintf("%s serves host %s on %s at %s",
						key, host, pl.Listener, listenerAddress(res.Table, pl.Listener, pl.Port)))
				}
			}
			return
		}
		if !hostMatchesAny(host, hostnames) {
			return
		}
		for _, p := range parents {
			for _, c := range p.Conditions {
				if c.Type == "Accepted" && c.Status != "True" {
					hints = append(hints, fmt.Sprintf("%s would serve host %s but is not attached: %s: %s", key, host, c.Reason, c.Message))
				}
			}
		}
		if len(parents) == 0 {
			hints = append(hints, fmt.Sprintf("%s would serve host %s but has no parent gwdev manages", key, host))
		}
	}
	res.Objects.EachRoute(func(r engine.Route) {
		if slices.Contains(engine.KindNamed(r.Key().Kind).RouteProtocols, gwv1.HTTPProtocolType) {
			consider(r.Key(), hostStrings(r.Hostnames()), r.RouteStatus().Parents)
		}
	})
	return hints
}

func hostStrings(hs []gwv1.Hostname) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = strings.ToLower(string(h))
	}
	return out
}

// hostMatchesAny reports whether host matches one of the route hostnames
// (none: any host).
func hostMatchesAny(host string, hostnames []string) bool {
	if len(hostnames) == 0 {
		return true
	}
	for _, h := range hostnames {
		if table.HostnameMatches(h, host) {
			return true
		}
	}
	return false
}
