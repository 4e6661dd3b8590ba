package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
)

// explainOptions are the flags of `gwdev explain`.
type explainOptions struct {
	// trust is --trust (trust.go).
	trust bool

	dir      string
	gateway  string
	output   string
	backends []string
	// req are the flags that shape the request or connection.
	req app.ProbeFlags
	// profiles are --profile CLASS=PROFILE flags (profiles.go).
	profiles []string
	// crds is --crds (crds.go).
	crds string
}

// explainOutputs are the formats explain's -o takes.
var explainOutputs = []string{"text", "json"}

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
` + app.ExplainSchemesHelp() + `
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
			o.req.MethodSet, o.req.SNISet = cmd.Flags().Changed("request"), cmd.Flags().Changed("sni")
			return o.run(cmd.OutOrStdout(), args[0])
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.dir, "dir", "d", ".", "the folder of manifests (the same as giving DIR)")
	f.StringVarP(&o.req.Method, "request", "X", "GET", "request method (POST for grpc:// URLs)")
	f.StringArrayVarP(&o.req.Headers, "header", "H", nil, "request header 'Name: value' (repeatable)")
	f.StringVar(&o.gateway, "gateway", "", "namespace/name of the Gateway (default: any Gateway with a listener on the port)")
	f.StringVarP(&o.output, "output", "o", "text", "output format: "+formatList(explainOutputs))
	f.StringArrayVar(&o.backends, "backend", nil, "as for up: namespace/service:port=host:port")
	f.StringVar(&o.req.SNI, "sni", "", "TLS server name (default: the URL's host; --sni '' sends none); a Host header of another listener gets 421")
	f.StringSliceVar(&o.req.ALPN, "alpn", nil, "ALPN protocols the ClientHello offers (default for https: h2,http/1.1)")
	f.BoolVar(&o.req.HTTP2, "http2", false, "send HTTP/2: h2c with prior knowledge on http://, ALPN h2 on https://")
	f.BoolVar(&o.req.HTTP1, "http1.1", false, "send HTTP/1.1 (ALPN http/1.1 on https://), even with a gRPC content type")
	f.StringVar(&o.req.CertFile, "cert", "", "client certificate (PEM) to present over TLS, with --key")
	f.StringVar(&o.req.KeyFile, "key", "", "private key (PEM) of --cert")
	f.StringArrayVar(&o.profiles, "profile", nil, profileFlagUsage)
	addCRDsFlag(f, &o.crds)
	addTrustFlag(f, &o.trust)
	return cmd
}

func (o *explainOptions) run(out io.Writer, rawURL string) error {
	if !slices.Contains(explainOutputs, o.output) {
		return fmt.Errorf("unknown output format %q (want %s)", o.output, formatList(explainOutputs))
	}
	if o.req.HTTP1 && o.req.HTTP2 {
		return fmt.Errorf("--http1.1 and --http2 exclude each other")
	}
	probe, err := o.req.Probe(rawURL)
	if err != nil {
		return err
	}
	ex, err := app.ExplainProject(o.dir, project.Flags{Backends: o.backends, Profiles: o.profiles, CRDs: o.crds, Trust: o.trust}, probe, rawURL, o.gateway)
	if err != nil {
		return err
	}
	if o.output == "json" {
		err = ex.WriteJSON(out)
	} else {
		ex.WriteText(out)
	}
	if err != nil {
		return err
	}
	// Exit 0 when a backend serves it or a route's redirect answers it;
	// 1 when gwdev refuses it, answers 4xx/5xx itself, or a gRPC error.
	if !ex.Served() {
		return exitError{exitProblems}
	}
	return nil
}
