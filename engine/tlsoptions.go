package engine

import (
	"crypto/tls"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gwdev/gwdev/engine/table"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// gwdev's option keys for a listener's tls.options and a BackendTLSPolicy's
// spec.options (the spec leaves options to implementations and asks for
// domain-prefixed keys). Values: versions "1.2" or "1.3"; cipher suites a
// comma-separated list of IANA names of TLS 1.2 suites Go considers secure
// (tls.CipherSuites), e.g. TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256.
const (
	TLSOptionMinVersion   = "gwdev.dev/min-tls-version"
	TLSOptionMaxVersion   = "gwdev.dev/max-tls-version"
	TLSOptionCipherSuites = "gwdev.dev/cipher-suites"
)

// tlsVersions are the versions the option keys accept, lowest first.
var tlsVersions = []string{"1.2", "1.3"}

// parseTLSOptions reads gwdev's keys from options. Keys gwdev does not know
// are returned in unknown (sorted) so that the caller warns about each; an
// unusable value of a known key is an error naming the key, and the caller
// refuses the listener or policy rather than serve weaker TLS than asked.
func parseTLSOptions(options map[gwv1.AnnotationKey]gwv1.AnnotationValue) (lim *TLSLimits, unknown []string, err error) {
	if len(options) == 0 {
		return nil, nil, nil
	}
	l := &TLSLimits{}
	for k, v := range options {
		val := strings.TrimSpace(string(v))
		switch string(k) {
		case TLSOptionMinVersion, TLSOptionMaxVersion:
			if !slices.Contains(tlsVersions, val) {
				return nil, nil, fmt.Errorf("options[%s]: %q is not a TLS version gwdev supports (%s)", k, v, strings.Join(tlsVersions, ", "))
			}
			if string(k) == TLSOptionMinVersion {
				l.MinVersion = val
			} else {
				l.MaxVersion = val
			}
		case TLSOptionCipherSuites:
			suites, err := parseCipherSuites(val)
			if err != nil {
				return nil, nil, fmt.Errorf("options[%s]: %w", k, err)
			}
			l.CipherSuites = suites
		default:
			unknown = append(unknown, string(k))
		}
	}
	sort.Strings(unknown)
	if l.MinVersion != "" && l.MaxVersion != "" && l.MinVersion > l.MaxVersion {
		return nil, nil, fmt.Errorf("options: %s %s is above %s %s", TLSOptionMinVersion, l.MinVersion, TLSOptionMaxVersion, l.MaxVersion)
	}
	if l.MinVersion == "1.3" && len(l.CipherSuites) > 0 {
		return nil, nil, fmt.Errorf("options[%s]: TLS 1.2 cipher suites have no effect with %s 1.3", TLSOptionCipherSuites, TLSOptionMinVersion)
	}
	if l.MinVersion == "" && l.MaxVersion == "" && l.CipherSuites == nil {
		return nil, unknown, nil
	}
	return l, unknown, nil
}

// parseCipherSuites checks a comma-separated list of TLS 1.2 suite names.
func parseCipherSuites(list string) ([]string, error) {
	known := map[string]bool{}
	tls13 := map[string]bool{}
	for _, s := range tls.CipherSuites() {
		if slices.Contains(s.SupportedVersions, tls.VersionTLS12) {
			known[s.Name] = true
		} else {
			tls13[s.Name] = true
		}
	}
	var out []string
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			continue
		case tls13[name]:
			return nil, fmt.Errorf("%s is a TLS 1.3 suite; TLS 1.3 suites cannot be restricted", name)
		case !known[name]:
			return nil, fmt.Errorf("%s is not a TLS 1.2 cipher suite Go considers secure", name)
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no cipher suite listed")
	}
	return out, nil
}

// listenerTLSOptions applies a listener's tls.options: gwdev's keys become
// the table's TLSLimits, an unusable value refuses the listener (Accepted=False
// UnsupportedValue, Programmed=False Invalid), and every unknown key is a
// warning naming it.
func (t *translator) listenerTLSOptions(l *listenerState, lt *ListenerTLS) {
	lim, unknown, err := parseTLSOptions(l.tls.Options)
	scope := "listener " + quote(l.name)
	for _, k := range unknown {
		t.noteKind(NoteUnknownTLSOption, SeverityWarning, l.ownerKey(), scope, fmt.Sprintf("tls.options[%s] is not an option gwdev knows; it is ignored (gwdev's keys: %s, %s, %s)",
			k, TLSOptionMinVersion, TLSOptionMaxVersion, TLSOptionCipherSuites))
	}
	if err != nil {
		msg := "tls." + err.Error()
		l.cond.fail("Accepted", string(gwv1.ListenerReasonUnsupportedValue), msg)
		l.cond.fail("Programmed", string(gwv1.ListenerReasonInvalid), msg)
		return
	}
	if lim != nil && lt.Mode == table.TLSModePassthrough {
		t.noteKind(NoteTLSOptionsPassthrough, SeverityWarning, l.ownerKey(), scope, "tls.options: gwdev's TLS version and cipher suite keys are ignored in Passthrough mode: the backend terminates TLS")
		return
	}
	lt.Limits = lim
}

// policyTLSOptions is listenerTLSOptions for a BackendTLSPolicy's
// spec.options: an unusable value makes the policy Accepted=False Invalid
// and the backends that use it answer 5xx.
func (t *translator) policyTLSOptions(ps *policyState) {
	lim, unknown, err := parseTLSOptions(ps.obj.Spec.Options)
	for _, k := range unknown {
		t.noteKind(NoteUnknownTLSOption, SeverityWarning, ps.key, "spec.options", fmt.Sprintf("options[%s] is not an option gwdev knows; it is ignored (gwdev's keys: %s, %s, %s)",
			k, TLSOptionMinVersion, TLSOptionMaxVersion, TLSOptionCipherSuites))
	}
	if err != nil {
		ps.cond.fail(string(gwv1.PolicyConditionAccepted), string(gwv1.PolicyReasonInvalid), "spec."+err.Error())
		if ps.invalid == "" {
			ps.invalid = "spec." + err.Error()
		}
		return
	}
	ps.tls.Limits = lim
}
