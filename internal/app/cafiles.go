package main

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// caHeaderPrefix starts the line of gwdev-certs.yaml's header that names
// the CA its certificates are signed by (appendManifests writes it).
const caHeaderPrefix = "# Signed by the local CA "

// knownCAFiles lists the CA bundles that copy-as-curl in the dashboard and
// the hints of the data plane and explain (a 421's, a refused handshake's)
// may name with --cacert, in the order they are tried: the CA that signed
// dir/gwdev-certs.yaml (gwdev certs --ca-dir), a CA the folder ships as
// dir/ca.crt (samples/https, whose README trusts it with --cacert), gwdev's
// default local CA (~/.config/gwdev/ca/ca.crt) and $SSL_CERT_FILE. A file
// is named only for a certificate it verifies. A file that does not
// exist yet is listed too: the dashboard reads them when a request is
// copied, so a CA that gwdev certs creates while up runs counts.
func knownCAFiles(dir string) []string {
	var files []string
	if p := certsFileCA(filepath.Join(dir, "gwdev-certs.yaml")); p != "" {
		files = append(files, p)
	}
	files = append(files, filepath.Join(dir, "ca.crt"))
	if cfg, err := os.UserConfigDir(); err == nil {
		files = append(files, filepath.Join(cfg, "gwdev", "ca", "ca.crt"))
	}
	if p := os.Getenv("SSL_CERT_FILE"); p != "" {
		files = append(files, p)
	}
	return slices.Compact(files)
}

// certsFileCA returns the CA path that the header of a gwdev-certs.yaml
// names ("" : no such file, or not written by gwdev certs).
func certsFileCA(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for i := 0; i < 5 && sc.Scan(); i++ {
		line := sc.Text()
		if i == 0 && !strings.HasPrefix(line, certsHeader) {
			return ""
		}
		if rest, ok := strings.CutPrefix(line, caHeaderPrefix); ok {
			p, _, _ := strings.Cut(rest, " (trust it")
			return p
		}
	}
	return ""
}
