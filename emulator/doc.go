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
// Files: server.go (lifecycle, Apply), listeners.go (binding), router.go
// (compiling the table), hosts.go (hostname precedence), match.go (request
// matching), handler.go (the request path), filters.go, cors.go, backend.go
// (selection, sessions), proxy.go (forwarding, retries, timeouts), echo.go,
// errors.go, trace.go, explain.go.
package emulator
