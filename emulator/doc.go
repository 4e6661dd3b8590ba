// Package emulator is gwdev's data plane. It serves an [engine.Table] on
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
// routing decision and the request path), filters.go, cors.go, backend.go
// (upstreams, weights, sessions), proxy.go (forwarding, retries, timeouts,
// mirrors), errors.go (errors to statuses), echo.go, trace.go, explain.go.
//
// TCP and UDP listeners (l4.go, udp.go) are served by L4 proxies: a TCP
// connection goes, whole, to one weighted backend of the first TCPRoute,
// with half-close passed on and an idle timeout (default one hour); UDP
// datagrams from one client address form a session with one backend that
// ends after the session timeout (default 60 seconds) without datagrams.
// Each connection or session is one Trace. grpcecho.go is the echo
// backend's gRPC side (the conformance GrpcEcho service, in process);
// grpctrace.go adds gRPC service, method and status to traces;
// conntrace.go traces HTTP connections that end without a request
// (garbage, silent clients).
package emulator
