// Package table is the routing table: plain data that the engine builds
// and the data plane (package emulator) executes, with no behaviour beyond
// Validate and hostname matching. It imports the standard library only, so
// the emulator depends on this package and not on the engine or the
// Gateway API types.
//
// Bound addresses → ports → listeners (protocol, TLS material, hostname) →
// virtual hosts → ordered route rules (matches, filters, weighted backends)
// → backend targets; every element carries a stable name and its source.
// A rule's matches (match.go), filters (filter.go), timeouts, retries and
// session settings (rulepolicy.go) are a compiled IR, not the Gateway API
// types: the engine decides every spec default once (paths normalised,
// match types resolved, header names canonical, redirect status and ports,
// the matched prefix of a ReplacePrefixMatch, mirror fractions, CORS
// origins, durations), and the data plane only executes the values. What
// can only be known per request (a redirect's scheme or host left to the
// request's, the listener's port) is marked as such field by field.
//
// HostnameMatches and HostIndex are the one hostname matcher: the engine's
// attachment code, the data plane's Host and SNI lookup and the CLI's
// explain hints all use them.
package table
