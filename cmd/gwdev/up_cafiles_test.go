package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/gwdev/gwdev/internal/app"
)

// TestKnownCAFiles: the dashboard's CA files are, in order, the CA that
// gwdev certs names in the folder's gwdev-certs.yaml, the folder's own
// ca.crt, the default local CA under the config directory and
// $SSL_CERT_FILE; a gwdev-certs.yaml that
// gwdev did not write names none.
func TestKnownCAFiles(t *testing.T) {
	cfg, dir := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("HOME", t.TempDir())
	t.Setenv("SSL_CERT_FILE", "/etc/my-roots.pem")
	def, own := filepath.Join(cfg, "gwdev", "ca", "ca.crt"), filepath.Join(dir, "ca.crt")
	if got := app.KnownCAFiles(dir); !slices.Equal(got, []string{own, def, "/etc/my-roots.pem"}) {
		t.Errorf("without gwdev-certs.yaml: %q", got)
	}
	if err := app.AppendManifests(filepath.Join(dir, "gwdev-certs.yaml"), "/ca dir/ca.crt", []byte("---\n")); err != nil {
		t.Fatal(err)
	}
	if got := app.KnownCAFiles(dir); !slices.Equal(got, []string{"/ca dir/ca.crt", own, def, "/etc/my-roots.pem"}) {
		t.Errorf("with gwdev-certs.yaml: %q", got)
	}
	writeFile(t, filepath.Join(dir, "gwdev-certs.yaml"), "# mine\n"+app.CAHeaderPrefix+"/elsewhere.crt (trust it)\n")
	if got := app.KnownCAFiles(dir); !slices.Equal(got, []string{own, def, "/etc/my-roots.pem"}) {
		t.Errorf("a file gwdev certs did not write names a CA: %q", got)
	}
}
