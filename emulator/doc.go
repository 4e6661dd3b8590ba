// Package emulator is gwdev's data plane. It serves a [table.Table] (package
// engine/table, the routing table the engine builds) on
// loopback: one listener per Gateway address and port, HTTP/1.1 and h2c on
// HTTP listeners, a router that picks the listener, virtual host and route
// rule the way the Gateway API requires, the HTTPRoute filters, weighted
// backends (reverse proxy to mapped, EndpointSlice and ExternalName targets,
// or the built-in echo backend), and one [Trace] per request.
//
// The emulator never reads manifests: the routing table is its only input.
// [Server.Apply] installs a new table atomically; [Explain] runs the same
// routing decision without a network.
//
// Files: server.go (lifecycle, Apply), listeners.go (binding, graceful
// retirement), router.go (compiling the table, rule indexes), hosts.go
// (hostname precedence), match.go (request matching), handler.go (the
// routing decision and the request path), filters.go (CORS decided by
// emulator/cors), backend.go
// (upstreams, weights, sessions), proxy.go (forwarding, retries, timeouts,
// mirrors), errors.go (errors to statuses), errorpages.go (answers an
// error backend replaces), trace.go, explain.go. The echo
// backend is package emulator/echo; internal/wire holds the connection
// plumbing both share.
//
// TCP and UDP listeners (l4.go, udp.go) are served by L4 proxies: a TCP
// connection goes, whole, to one weighted backend of the first TCPRoute,
// with half-close passed on and an idle timeout (default one hour); UDP
// datagrams from one client address form a session with one backend that
// ends after the session timeout (default 60 seconds) without datagrams.
// Each connection or session is one Trace. grpctrace.go adds gRPC service, method and status to traces;
// conntrace.go traces HTTP connections that end without a request
// (garbage, silent clients). Package emulator/h1 serves the common HTTP/1.1
// requests of HTTP and HTTPS listeners (no body, no Expect or Upgrade) on
// one goroutine per connection with its own parser and response writer,
// putting the same bytes on the wire as net/http's server (anything else
// hands the connection, bytes read so far replayed, to net/http), and
// holds the HTTP/1.1 connection pool to plain-HTTP backends; listeners.go
// (fastPath) and backend.go wire them to the data plane.
//
// HTTPS and TLS listeners sharing a port share one socket (tls.go,
// tlsconn.go): the ClientHello's SNI picks the listener with the same
// precedence as Host on HTTP ports; HTTPS listeners terminate with their
// certificates (ALPN h2, http/1.1; frontend client certificate validation)
// and hand the connection to the port's HTTP server, which answers 421 to a
// request whose Host belongs to another listener than the SNI; TLS
// listeners forward TLSRoute streams, raw (Passthrough, the ClientHello
// replayed) or decrypted (Terminate) (passthrough.go). Refused handshakes,
// plain HTTP and garbage on a TLS port are traced. BackendTLSPolicy errors
// are explained in traces (backendtls.go); the echo backend serves TLS in
// process with its Service's Secret (emulator/echo). The Gateway's client
// certificate to backends is presented, and each connection marked, by
// emulator/clientcert; the trace's note is written by proxy.go.
//
// ExternalAuth (HTTP and gRPC ext_authz) is spoken by emulator/extauth: it
// builds the check request, asks the auth backend and reads the answer into
// a decision; extauth.go queues the checks, hands it the auth backend's
// upstream and applies the decision to the exchange (the trace, the
// headers for the backend, the answer to the client).
//
// Implementation-profile behaviour from the table (table.ListenerPolicy,
// table.RulePolicy, table.AccessLogPolicy; for example the gwin profile,
// docs/gwin.md): RBAC with 403 and the deciding principal in the trace
// (policy.go, decided by emulator/auth, as basic authentication is; rate limits by emulator/ratelimit), HTTP/1.x-only listeners, the HTTP/2 stream limit and stream
// idle timeouts (policy.go), and access-log discard rules that filter the
// access log but never traces (accesslog_filter.go).
//
// XTelemetryPolicy tracing (table.Tracing, telemetry.go): a Gateway with
// tracing makes one OpenTelemetry span per HTTP request, exported over OTLP
// by a bounded queue that drops (counted: Server.TelemetryStats, which the
// admin API exposes as gwdev_spans_total) rather than wait, and sends the
// span's traceparent to the backend.
package emulator
