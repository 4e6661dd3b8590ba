package emulator

import (
	"crypto/tls"
	"fmt"
	"hash"
	"strings"

	"github.com/gwdev/gwdev/engine/table"
)

// tlsVersionIDs maps the table's version names to crypto/tls versions.
var tlsVersionIDs = map[string]uint16{"1.2": tls.VersionTLS12, "1.3": tls.VersionTLS13}

// applyTLSLimits restricts conf to the versions and cipher suites a
// listener's tls.options or a BackendTLSPolicy's options allow. The engine
// validated the values; one the data plane does not know is an error, so
// the listener or backend is refused rather than served with weaker TLS.
func applyTLSLimits(conf *tls.Config, l *table.TLSLimits) error {
	if l == nil {
		return nil
	}
	for _, v := range []struct {
		name string
		dst  *uint16
	}{{l.MinVersion, &conf.MinVersion}, {l.MaxVersion, &conf.MaxVersion}} {
		if v.name == "" {
			continue
		}
		id, ok := tlsVersionIDs[v.name]
		if !ok {
			return fmt.Errorf("TLS version %q is not supported", v.name)
		}
		*v.dst = id
	}
	if len(l.CipherSuites) == 0 {
		return nil
	}
	ids := map[string]uint16{}
	for _, s := range tls.CipherSuites() {
		ids[s.Name] = s.ID
	}
	conf.CipherSuites = nil
	for _, name := range l.CipherSuites {
		id, ok := ids[name]
		if !ok {
			return fmt.Errorf("cipher suite %s is not supported", name)
		}
		conf.CipherSuites = append(conf.CipherSuites, id)
	}
	return nil
}

// hashTLSLimits adds the limits to an upstream's key hash, so that a
// changed policy gets a new upstream (and new connections).
func hashTLSLimits(h hash.Hash, l *table.TLSLimits) {
	if l != nil {
		fmt.Fprintf(h, "|limits=%s-%s:%s", l.MinVersion, l.MaxVersion, strings.Join(l.CipherSuites, ","))
	}
}
