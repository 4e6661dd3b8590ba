// Package echo is gwdev's built-in echo backend: what a Service without a
// mapping, EndpointSlice or ExternalName answers with, in process. It speaks
// what the Gateway API conformance suite's backends speak (echo-basic): a
// JSON description of each HTTP request ([Response]), /status/<code>,
// ?delay=, X-Echo-Set-Header, the /retry/ simulation and a WebSocket echo
// on /ws (echo.go, echo_ws.go); the GrpcEcho service and a demo ExternalAuth
// server over gRPC (grpcecho.go, echoauth.go); the TCP echo protocol and a
// UDP echo with a DNS whoami answer (echol4.go); and TLS with its Service's
// certificate or a generated one (echotls.go).
//
// The data plane (package emulator) reaches it through [Target], an
// http.RoundTripper, so requests to the echo pass the same proxy path
// (filters, retries, timeouts) as real backends; through [ServeStream] for
// TCPRoute and TLSRoute connections, [Target.UDPAnswer] for datagrams and
// [HTTPS] for a BackendTLSPolicy's in-process TLS server. The package knows
// nothing of the data plane: the Gateway a request arrived at comes from the
// function given to [NewTarget]. It imports engine/table only for the
// backend's description.
package echo
