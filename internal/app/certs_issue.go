package app

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
)

// CertsArgs say what `gwdev certs` does: the folder, read with Flags, the
// local CA's directory, the manifest file and the certificates' validity.
type CertsArgs struct {
	Dir   string
	Flags project.Flags
	// CADir keeps the local CA ("": ~/.config/gwdev/ca).
	CADir string
	// Out is the file the Secret manifests are appended to ("":
	// Dir/gwdev-certs.yaml).
	Out      string
	Validity time.Duration
}

// Certs creates (or reuses) the local CA, signs a certificate for every
// HTTPS and TLS Terminate listener under a.Dir whose certificateRef names
// a Secret that does not exist, appends them as Secret manifests, and
// writes to out what it did and the curl lines that trust the CA. It never
// writes a private key to out.
func Certs(out io.Writer, a CertsArgs) error {
	proj, err := project.Open([]string{a.Dir}, a.Flags)
	if err != nil {
		return err
	}
	// One translation gives the addresses gwdev up serves the Gateways on
	// (for the curl lines), as up computes them.
	lr, res, err := proj.LoadAndTranslate(metav1.NewTime(time.Now().UTC().Truncate(time.Second)))
	if err != nil {
		return err
	}
	for _, p := range lr.Problems {
		fmt.Fprintf(out, "  ✗ %s\n", p.String())
	}
	wanted := MissingCertificates(lr.Snapshot)
	if len(wanted) == 0 {
		fmt.Fprintln(out, "gwdev certs: every HTTPS and TLS Terminate listener's certificateRefs name an existing Secret: nothing to do")
		return nil
	}
	caDir := a.CADir
	if caDir == "" {
		cfg, err := os.UserConfigDir()
		if err != nil {
			return fmt.Errorf("finding the config directory (use --ca-dir): %w", err)
		}
		caDir = filepath.Join(cfg, "gwdev", "ca")
	}
	if abs, err := filepath.Abs(caDir); err == nil {
		caDir = abs // gwdev-certs.yaml names it for gwdev up, which may run elsewhere
	}
	ca, created, err := LoadOrCreateCA(caDir)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(out, "gwdev certs: created a local CA in %s (key readable only by you)\n", caDir)
	} else {
		fmt.Fprintf(out, "gwdev certs: using the local CA in %s\n", caDir)
	}
	path := a.Out
	if path == "" {
		path = filepath.Join(a.Dir, "gwdev-certs.yaml")
	}
	var doc bytes.Buffer
	for _, w := range wanted {
		crt, key, notAfter, err := ca.Issue(w.Hostnames, a.Validity)
		if err != nil {
			return fmt.Errorf("signing a certificate for %s: %w", w.Secret, err)
		}
		WriteSecretManifest(&doc, w, crt, key)
		fmt.Fprintf(out, "  + Secret %s for %s (valid until %s; used by %s)\n", w.Secret, strings.Join(w.Hostnames, ", "),
			notAfter.Format("2006-01-02"), strings.Join(w.Users, ", "))
		if w.CrossNamespace {
			fmt.Fprintf(out, "    note: the Secret is in another namespace than its listener; a ReferenceGrant must allow it\n")
		}
	}
	if err := AppendManifests(path, ca.CertPath, doc.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(out, "gwdev certs: wrote %s to %s\n", report.Plural(len(wanted), "Secret"), path)
	addrs := gatewayAddresses(res.Table)
	fmt.Fprintln(out, "try them while gwdev up serves the folder (--resolve sends the name to the Gateway's address):")
	for _, w := range wanted {
		fmt.Fprintf(out, "  %s\n", certsCurl(ca.CertPath, w, addrs[w.Gateway]))
	}
	if note := portNote(wanted); note != "" {
		fmt.Fprintln(out, note)
	}
	fmt.Fprintf(out, "or for the shell (curl, openssl, Go tools; replaces the system roots): export SSL_CERT_FILE=%s\n", ca.CertPath)
	return nil
}

// gatewayAddresses maps "namespace/name" to the loopback address gwdev up
// gives each Gateway of a translation's table (spec.addresses, else
// 127.0.0.1, .2, … by name).
func gatewayAddresses(t *engine.Table) map[string]string {
	out := map[string]string{}
	for _, g := range t.Gateways {
		out[g.Gateway.Namespace+"/"+g.Gateway.Name] = g.Address
	}
	return out
}

// certsCurl is the curl line that reaches a listener of w with the CA
// trusted: a host a route attached to it serves (WantedSecret.CurlHost),
// resolved to the Gateway's address, on the port gwdev serves; when no
// route serves that host yet, the line says gwdev answers 404.
func certsCurl(caPath string, w *WantedSecret, addr string) string {
	host := w.CurlHost
	if addr == "" {
		addr = "127.0.0.1"
	}
	port := strconv.Itoa(int(servedPort(w.Port)))
	url := "https://" + host + "/"
	if port != "443" {
		url = "https://" + host + ":" + port + "/"
	}
	line := fmt.Sprintf("curl --cacert %s --resolve %s:%s:%s %s", caPath, host, port, addr, url)
	if !w.CurlServed {
		line += "   # no route attached to " + w.Users[0] + " serves " + host + " yet: 404 until one does"
	}
	return line
}

// servedPort is the port gwdev up will most likely serve port on: a port
// below the unprivileged start (net.ipv4.ip_unprivileged_port_start, 1024
// when unknown) cannot be bound by a user other than root, and is served
// on port+DefaultPortOffset.
func servedPort(port int32) int32 {
	if os.Geteuid() == 0 || port >= unprivilegedPortStart() {
		return port
	}
	return port + emulator.DefaultPortOffset
}

func unprivilegedPortStart() int32 {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_unprivileged_port_start")
	if err != nil {
		return 1024
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 1024
	}
	return int32(n)
}

// portNote says when a printed port differs from the listener's.
func portNote(wanted []*WantedSecret) string {
	for _, w := range wanted {
		if p := servedPort(w.Port); p != w.Port {
			return fmt.Sprintf("(port %d is served on %d: as a user other than root gwdev up cannot bind ports below %d; --port-offset)",
				w.Port, p, unprivilegedPortStart())
		}
	}
	return ""
}
