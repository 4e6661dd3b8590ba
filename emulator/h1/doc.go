// Package h1 is the data plane's HTTP/1.1 wire room: the fast server path
// of HTTP and HTTPS listeners and the upstream connection pool.
//
// [Server] reads the common HTTP/1.1 requests with its own parser into
// reused buffers and, once a handler released its request, the request of
// the last (request.go, slot.go), runs the listener's handler with its own
// [ResponseWriter] (response.go), which puts on the wire what net/http's
// would, and hands every other connection, with the bytes read so far
// replayed ([ReplayConn]), to the listener's net/http server
// (server.go). [Pool] sends plain HTTP/1.1 requests over keep-alive
// connections of its own and looks at every idle connection before reusing
// it (pool.go, probe_unix.go), so that no connection with unread bytes
// carries a request. [Pool.Exchange] reads a plain answer's head with the
// pool's own parser into the connection's buffers ([Answer], answer.go:
// what net/http's ReadResponse would make of it, which reads every other
// answer), and [ResponseWriter.WriteForwarded] passes such header fields on
// without an http.Header.
//
// The package knows nothing of routing, filters or traces: package emulator
// decides what a request is and hands h1 a handler, a connection context
// and a fault function. h1 imports the standard library, x/net's httpguts
// and emulator/internal/wire only; it never imports emulator.
package h1
