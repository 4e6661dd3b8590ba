// Command fhproxy is the prototype behind the fasthttp decision in
// docs/decisions.md ("A forwarding lane of our own, not fasthttp"): the
// bench route (host api.example.com, PathPrefix /api, a request header
// set, X-Forwarded-For) served by fasthttp's Server and forwarded with its
// HostClient. It is a separate module so that gwdev does not depend on
// fasthttp; bench/proxy.sh runs it as the side "fasthttp" when
// FHPROXY=1. Like bench/relay it is no proxy anyone should use: no hop-by-hop
// header handling, whole bodies buffered, no traces.
package main

import (
	"flag"
	"log"

	"github.com/valyala/fasthttp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18086", "listen address")
	upstream := flag.String("upstream", "127.0.0.1:18080", "backend address")
	flag.Parse()
	hc := &fasthttp.HostClient{Addr: *upstream, MaxConns: 1024}
	h := func(ctx *fasthttp.RequestCtx) {
		req := &ctx.Request
		if string(req.Header.Host()) != "api.example.com" || len(ctx.Path()) < 4 || string(ctx.Path()[:4]) != "/api" {
			ctx.SetStatusCode(fasthttp.StatusNotFound)
			return
		}
		req.Header.Set("X-Route", "api")
		req.Header.Set("X-Forwarded-For", ctx.RemoteIP().String())
		if err := hc.Do(req, &ctx.Response); err != nil {
			ctx.SetStatusCode(fasthttp.StatusBadGateway)
		}
	}
	log.Fatal((&fasthttp.Server{Handler: h}).ListenAndServe(*addr))
}
