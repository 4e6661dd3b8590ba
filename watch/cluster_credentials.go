package watch

import (
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/gwdev/gwdev/engine"
)

// clusterCredentials are the kubeconfig's secrets for one cluster, kept to
// be taken out of everything gwdev prints or writes about that cluster:
// its server's address, error messages (client-go's quote URLs; a server
// may echo what it was sent), notes and warnings.
//
// It is the one redaction of cluster text; the emulator's RedactURI is for
// requests gwdev serves (and keeps a URL's user name, which a kubeconfig
// may use as a token: "https://TOKEN@host").
type clusterCredentials struct {
	// secrets are the values replaced by engine.Redacted, longest first.
	secrets []string
}

// userinfo matches the user information of a URL in free text.
var userinfo = regexp.MustCompile(`(://)[^/?#@\s"']*@`)

// guardCredentials moves the user information of rc.Host (a kubeconfig's
// "server: http://admin:PASSWORD@host") into rc's basic-auth fields, as
// net/http would have sent it, so that no URL client-go builds, logs or
// quotes in an error carries it; and it returns what to redact.
func guardCredentials(rc *rest.Config) clusterCredentials {
	var c clusterCredentials
	if u := parseHost(rc.Host); u != nil && u.User != nil {
		name := u.User.Username()
		pass, _ := u.User.Password()
		c.add(name, pass, u.User.String())
		if rc.Username == "" && rc.Password == "" && rc.BearerToken == "" && rc.BearerTokenFile == "" {
			rc.Username, rc.Password = name, pass
		}
		u.User = nil
		rc.Host = u.String()
	}
	c.add(rc.Password, rc.BearerToken, string(rc.KeyData))
	if rc.BearerTokenFile != "" {
		if data, err := os.ReadFile(rc.BearerTokenFile); err == nil {
			c.add(strings.TrimSpace(string(data)))
		}
	}
	if rc.AuthProvider != nil {
		for _, v := range rc.AuthProvider.Config {
			c.add(v)
		}
	}
	if rc.ExecProvider != nil {
		for _, e := range rc.ExecProvider.Env {
			c.add(e.Value)
		}
	}
	slices.SortFunc(c.secrets, func(a, b string) int { return len(b) - len(a) })
	c.secrets = slices.Compact(c.secrets)
	return c
}

// parseHost parses a kubeconfig server as client-go does (a host without a
// scheme is https).
func parseHost(host string) *url.URL {
	u, err := url.Parse(host)
	if err != nil || u.Scheme == "" || u.Host == "" {
		if u, err = url.Parse("https://" + host); err != nil {
			return nil
		}
	}
	return u
}

// add records secrets, in the forms they take in text and URLs.
func (c *clusterCredentials) add(values ...string) {
	for _, v := range values {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		c.secrets = append(c.secrets, v, url.QueryEscape(v), url.PathEscape(v))
	}
}

// redact takes every credential out of s: the user information of URLs
// and the kubeconfig's secret values.
func (c clusterCredentials) redact(s string) string {
	s = userinfo.ReplaceAllString(s, "${1}"+engine.Redacted+"@")
	for _, v := range c.secrets {
		s = strings.ReplaceAll(s, v, engine.Redacted)
	}
	return s
}

// serverName is the cluster's address as gwdev shows it: scheme, host and
// path, never user information or a query.
func serverName(host string) string {
	u := parseHost(host)
	if u == nil {
		return "(an unparsable server address)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// redactedError is an error whose message has been redacted; it unwraps to
// the original, for errors.Is and errors.As only.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
