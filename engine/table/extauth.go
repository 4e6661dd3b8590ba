package table

import "fmt"

// ExternalAuth is a resolved ExternalAuth filter (GEP-1494): where the
// gateway asks whether a request may pass, and what it sends and copies.
type ExternalAuth struct {
	// Name is "<rule or backend name>/filter/<i>/externalauth".
	Name string `json:"name"`
	// Protocol is "HTTP" (the auth backend's 200 allows) or "GRPC" (Envoy's
	// envoy.service.auth.v3.Authorization/Check).
	Protocol string `json:"protocol"`
	// Backend is the auth backend; when it is invalid, the requests that
	// reach the filter are refused (never forwarded unchecked).
	Backend *Backend `json:"backend"`
	// PathPrefix is put before the client's path in HTTP authorization
	// requests ("" : none); it is sanitised: it starts with "/", has no
	// "." or ".." segments and no trailing "/".
	PathPrefix string `json:"pathPrefix,omitempty"`
	// AllowedHeaders are the client request headers sent besides the
	// always-sent ones (HTTP: Host, method, path, Content-Length,
	// Authorization), in canonical form. Empty means: HTTP, only the
	// always-sent ones; GRPC, every header.
	AllowedHeaders []string `json:"allowedHeaders,omitempty"`
	// AllowedResponseHeaders are the auth response headers copied onto the
	// request to the backend when it allows, in canonical form (empty:
	// every header but Host/Authority and those describing the auth
	// response itself).
	AllowedResponseHeaders []string `json:"allowedResponseHeaders,omitempty"`
	// MaxBodySize is forwardBody.maxSize: the request body is buffered and
	// sent to the auth backend up to this many bytes, and a larger body is
	// refused with 413 (0: the body is not sent).
	MaxBodySize int `json:"maxBodySize,omitempty"`
}

// validateExternalAuth checks a rule's or backend's ExternalAuth entries:
// each has a name, a known protocol and a backend with a target or a reason.
func validateExternalAuth(as []*ExternalAuth) error {
	for _, a := range as {
		switch {
		case a == nil || a.Name == "":
			return fmt.Errorf("ExternalAuth entry without a name")
		case a.Protocol != "HTTP" && a.Protocol != "GRPC":
			return fmt.Errorf("%s: protocol %q", a.Name, a.Protocol)
		case a.Backend == nil || (a.Backend.Target == nil && a.Backend.Invalid == ""):
			return fmt.Errorf("%s: no backend target and no reason", a.Name)
		case a.MaxBodySize < 0:
			return fmt.Errorf("%s: negative maxBodySize", a.Name)
		}
	}
	return nil
}
