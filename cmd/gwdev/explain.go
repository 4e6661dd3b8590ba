package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/internal/app"
)

// explainOptions are the flags of `gwdev explain`.
type explainOptions struct {
	// trust is --trust (trust.go).
	trust bool

	dir      string
	method   string
	headers  []string
	gateway  string
	output   string
	backends []string
	// sni is the TLS server name of an https, grpcs or tls URL ("" : the
	// URL's host; given as "": none).
	sni string
	// alpn overrides the protocols the ClientHello offers.
	alpn []string
	// http2 sends HTTP/2 (h2c on http://, ALPN h2 on https://); http1
	// sends HTTP/1.1 even for a gRPC content type.
	http2, http1 bool
	// certFile and keyFile are the client certificate a TLS probe presents.
	certFile, keyFile string
	// methodSet says whether -X was given (gRPC URLs default to POST).
	methodSet bool
	// profiles are --profile CLASS=PROFILE flags (profiles.go).
	profiles []string
	// crds is --crds (crds.go).
	crds string
}

func newExplainCmd() *cobra.Command {
	o := &explainOptions{}
	cmd := &cobra.Command{
		Use:   "explain [DIR] URL",
		Short: "Say what gwdev's data plane would do with a request or connection, without sending it",
		Long: `explain translates the manifests in DIR (or --dir; default: the current directory) and runs
the data plane's own decisions for one request or connection, with only the network replaced:
the TLS handshake (which listener the SNI selects, the certificate, client certificate
validation, or why the handshake is refused), which Gateway listener takes it, which
virtual host, which route rule and match (or why nothing matched), which filters apply,
and which backend would answer and why. It agrees with what ` + "`gwdev up`" + ` serves. What it
does not do (ask ExternalAuth servers, connect to backends, send mirrors) it lists under "not done:".

Exit status: 0 when a backend would serve the request or connection (or a route's redirect
answers it), 1 when it would be refused, answered 4xx/5xx by gwdev (404 no route, 421,
500 for a missing backend, 403 denied, …) or end in a gRPC error, 2 on usage errors.

The URL's scheme says what is sent, its host is the Host header (and the SNI over TLS),
its port the listener port:
` + schemesHelp() + `
Examples:

  gwdev explain samples/basic -H 'X-Canary: true' http://app.example.com:8080/api/users
  gwdev explain samples/https --sni nope.example.org https://app.example.com/
  gwdev explain samples/grpc grpc://grpc.example.com:9090/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/Echo
  gwdev explain samples/tls-passthrough tls://db.example.com:9443
  gwdev explain samples/tcp-udp tcp://127.0.0.1:9100`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 { // explain DIR URL, as the other commands take DIR
				if cmd.Flags().Changed("dir") && o.dir != args[0] {
					return fmt.Errorf("two folders given: %s and --dir %s", args[0], o.dir)
				}
				o.dir, args = args[0], args[1:]
			} else if !strings.Contains(args[0], "://") {
				if fi, err := os.Stat(args[0]); err == nil && fi.IsDir() {
					return fmt.Errorf("explain %s needs a URL after the folder, such as: gwdev explain %s http://HOST:PORT/PATH", args[0], args[0])
				}
			}
			o.methodSet = cmd.Flags().Changed("request")
			return o.run(cmd.OutOrStdout(), args[0], cmd.Flags().Changed("sni"))
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.dir, "dir", "d", ".", "the folder of manifests (the same as giving DIR)")
	f.StringVarP(&o.method, "request", "X", "GET", "request method (POST for grpc:// URLs)")
	f.StringArrayVarP(&o.headers, "header", "H", nil, "request header 'Name: value' (repeatable)")
	f.StringVar(&o.gateway, "gateway", "", "namespace/name of the Gateway (default: any Gateway with a listener on the port)")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	f.StringArrayVar(&o.backends, "backend", nil, "as for up: namespace/service:port=host:port")
	f.StringVar(&o.sni, "sni", "", "TLS server name (default: the URL's host; --sni '' sends none); a Host header of another listener gets 421")
	f.StringSliceVar(&o.alpn, "alpn", nil, "ALPN protocols the ClientHello offers (default for https: h2,http/1.1)")
	f.BoolVar(&o.http2, "http2", false, "send HTTP/2: h2c with prior knowledge on http://, ALPN h2 on https://")
	f.BoolVar(&o.http1, "http1.1", false, "send HTTP/1.1 (ALPN http/1.1 on https://), even with a gRPC content type")
	f.StringVar(&o.certFile, "cert", "", "client certificate (PEM) to present over TLS, with --key")
	f.StringVar(&o.keyFile, "key", "", "private key (PEM) of --cert")
	f.StringArrayVar(&o.profiles, "profile", nil, profileFlagUsage)
	addCRDsFlag(f, &o.crds)
	addTrustFlag(f, &o.trust)
	return cmd
}

func (o *explainOptions) run(out io.Writer, rawURL string, sniSet bool) error {
	if o.output != "text" && o.output != "json" {
		return fmt.Errorf("unknown output format %q (want text or json)", o.output)
	}
	if o.http1 && o.http2 {
		return fmt.Errorf("--http1.1 and --http2 exclude each other")
	}
	probe, err := o.probe(rawURL, sniSet)
	if err != nil {
		return err
	}
	proj, err := app.OpenProject([]string{o.dir}, app.ProjectFlags{Backends: o.backends, Profiles: o.profiles, CRDs: o.crds, Trust: o.trust})
	if err != nil {
		return err
	}
	lr, err := proj.Load(nil)
	if err != nil {
		return err
	}
	res := proj.Translate(lr.Snapshot, app.Translation{Now: metav1.NewTime(time.Now().UTC())})
	ex, err := app.Explain(res, probe, rawURL, o.gateway, o.dir)
	if err != nil {
		return err
	}
	tr, notDone := ex.Trace, ex.NotDone
	if o.output == "json" {
		b, err := json.MarshalIndent(struct {
			*emulator.Trace
			NotDone []string `json:"notDone,omitempty"`
		}{tr, notDone}, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\n", b)
		return explainExit(tr)
	}
	printExplain(out, probe, tr)
	printNotDone(out, notDone)
	printOutranked(out, res, tr)
	printExplainPolicies(out, res, tr)
	if tr.Rule == "" && tr.Method != "" && tr.Status != http.StatusMisdirectedRequest && tr.Status != http.StatusBadRequest {
		for _, h := range ex.Hints {
			fmt.Fprintf(out, "  hint: %s\n", h)
		}
	}
	pruned := 0
	for _, p := range lr.Problems {
		if p.Pruned {
			pruned++
		}
	}
	if n := len(lr.Problems) - pruned; n > 0 {
		fmt.Fprintf(out, "\nnote: %s did not load; run gwdev check %s\n", plural(n, "file problem"), o.dir)
	}
	if pruned > 0 {
		fmt.Fprintf(out, "\nnote: %s not in the cluster's CRDs (dropped, as that cluster stores the objects); run gwdev check --crds %s %s\n",
			plural(pruned, "field"), proj.CRDsName(), o.dir)
	}
	return explainExit(tr)
}

// explainExit is explain's exit status for what the data plane would do:
// nil (0) when a backend serves it or a route's redirect answers it,
// exit 1 when gwdev refuses the connection, answers 4xx/5xx itself, or
// the answer is a gRPC error.
func explainExit(t *emulator.Trace) error {
	if explainServed(t) {
		return nil
	}
	return exitError{exitProblems}
}

// explainServed reports whether the trace ends served (see explainExit).
func explainServed(t *emulator.Trace) bool {
	switch {
	case t.Status >= 400:
		return false
	case t.GRPCStatus != "" && t.GRPCStatus != "OK":
		return false
	case t.Status >= 300:
		return true // a RequestRedirect filter answers
	}
	return t.Backend != "" || t.Target != "" || t.Upstream != ""
}

func printExplain(out io.Writer, p emulator.Probe, t *emulator.Trace) {
	fmt.Fprintln(out, probeLine(p, t))
	step := func(label, value string) {
		if value != "" {
			fmt.Fprintf(out, "  %-14s %s\n", label+":", value)
		}
	}
	step("gateway", t.Gateway)
	step("sni", t.SNI)
	if p.TLS && t.SNI == "" {
		step("sni", "(none)")
	}
	step("tls", strings.TrimSpace(t.TLSVersion+" "+t.NegotiatedProtocol))
	if t.Certificate != "" {
		step("certificate", "from Secret "+t.Certificate)
	}
	step("client cert", t.ClientCert)
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
	step("backend cert", t.BackendClientCert)
	step("location", t.Location)
	switch {
	case t.GRPCStatus != "":
		step("answer", fmt.Sprintf("grpc-status %s (HTTP %d)", t.GRPCStatus, t.Status))
	case t.Status != 0:
		step("answer", fmt.Sprintf("%d %s", t.Status, http.StatusText(t.Status)))
	case t.Backend != "" && t.End == "":
		step("answer", "from the backend")
	case t.End != "":
		step("connection", t.EndText())
	}
	step("why", t.Reason)
	if t.Hint != "" {
		fmt.Fprintf(out, "  hint: %s\n", t.Hint)
	}
}

// probeLine is the first line of explain's answer: what was sent where.
func probeLine(p emulator.Probe, t *emulator.Trace) string {
	if r := p.Request; r != nil {
		proto := r.Proto
		if strings.HasPrefix(t.Proto, "HTTP/") {
			proto = t.Proto // over TLS, the protocol ALPN agreed
		}
		kind := ""
		if t.GRPC {
			kind = "gRPC "
		}
		// The trace's path, not the request's: it is redacted (emulator/redact.go).
		path := t.Path
		if path == "" {
			path = r.URL.RequestURI()
		}
		return fmt.Sprintf("%s%s %s %s (Host %s, port %d%s)", kind, r.Method, path, proto, r.Host, p.Port, tlsNote(p))
	}
	switch {
	case p.UDP:
		return fmt.Sprintf("UDP datagrams to port %d", p.Port)
	case p.TLS:
		return fmt.Sprintf("TLS connection to port %d%s", p.Port, tlsNote(p))
	}
	return fmt.Sprintf("TCP connection to port %d", p.Port)
}

// tlsNote says how a TLS probe says hello.
func tlsNote(p emulator.Probe) string {
	if !p.TLS {
		return ""
	}
	sni := p.SNI
	if sni == "" {
		sni = "(none)"
	}
	s := ", TLS with SNI " + sni
	if len(p.ALPN) > 0 {
		s += ", ALPN " + strings.Join(p.ALPN, ",")
	}
	return s
}

// printNotDone writes explain's "not done:" lines.
func printNotDone(out io.Writer, lines []string) {
	for i, l := range lines {
		label := ""
		if i == 0 {
			label = "not done:"
		}
		fmt.Fprintf(out, "  %-14s %s\n", label, l)
	}
}
