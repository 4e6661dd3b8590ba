package engine

// EchoAuthHeaderAnnotation, on a Service, makes gwdev's echo backend of that
// Service a demo authorization server for ExternalAuth filters: it allows
// (HTTP 200; gRPC OK) a request that carries the named header with a
// non-empty value, and denies any other with 403 (gRPC PERMISSION_DENIED).
// Everything else about the echo backend is unchanged.
const EchoAuthHeaderAnnotation = "gwdev.dev/echo-auth-header"
