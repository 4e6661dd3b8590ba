package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/internal/app"
)

// certsOptions are the flags of `gwdev certs`.
type certsOptions struct {
	// trust is --trust (trust.go).
	trust bool

	out   string
	caDir string
	days  int
	// crds is --crds (crds.go).
	crds string
}

func newCertsCmd() *cobra.Command {
	o := &certsOptions{}
	cmd := &cobra.Command{
		Use:   "certs [DIR]",
		Short: "Create a local CA and certificates for HTTPS listeners whose Secret is missing",
		Long: `certs creates (or reuses) a local certificate authority under your config directory
(~/.config/gwdev/ca; the key is readable only by you), then, for every HTTPS listener and TLS
listener in Terminate mode under DIR (default: the current directory) whose certificateRef names
a Secret that does not exist, signs a certificate for the listener's hostname (or, without one,
for the hostnames of the routes attached to it) and writes it as a kubernetes.io/tls Secret
manifest into DIR/gwdev-certs.yaml, which you can keep. It prints what it wrote and how to make
curl trust the CA. It never prints a private key.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return o.run(cmd.OutOrStdout(), dir)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", "write the Secret manifests to this file (default DIR/gwdev-certs.yaml)")
	f.StringVar(&o.caDir, "ca-dir", "", "keep the local CA in this directory (default ~/.config/gwdev/ca)")
	f.IntVar(&o.days, "days", 397, "validity of the certificates, in days")
	addCRDsFlag(f, &o.crds)
	addTrustFlag(f, &o.trust)
	return cmd
}

func (o *certsOptions) run(out io.Writer, dir string) error {
	if o.days < 1 {
		return fmt.Errorf("--days must be at least 1")
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	proj, err := app.OpenProject([]string{dir}, app.ProjectFlags{CRDs: o.crds, Trust: o.trust})
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
	wanted := app.MissingCertificates(lr.Snapshot)
	if len(wanted) == 0 {
		fmt.Fprintln(out, "gwdev certs: every HTTPS and TLS Terminate listener's certificateRefs name an existing Secret: nothing to do")
		return nil
	}
	caDir := o.caDir
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
	ca, created, err := app.LoadOrCreateCA(caDir)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(out, "gwdev certs: created a local CA in %s (key readable only by you)\n", caDir)
	} else {
		fmt.Fprintf(out, "gwdev certs: using the local CA in %s\n", caDir)
	}
	path := o.out
	if path == "" {
		path = filepath.Join(dir, "gwdev-certs.yaml")
	}
	var doc bytes.Buffer
	for _, w := range wanted {
		crt, key, notAfter, err := ca.Issue(w.Hostnames, time.Duration(o.days)*24*time.Hour)
		if err != nil {
			return fmt.Errorf("signing a certificate for %s: %w", w.Secret, err)
		}
		app.WriteSecretManifest(&doc, w, crt, key)
		fmt.Fprintf(out, "  + Secret %s for %s (valid until %s; used by %s)\n", w.Secret, strings.Join(w.Hostnames, ", "),
			notAfter.Format("2006-01-02"), strings.Join(w.Users, ", "))
		if w.CrossNamespace {
			fmt.Fprintf(out, "    note: the Secret is in another namespace than its listener; a ReferenceGrant must allow it\n")
		}
	}
	if err := app.AppendManifests(path, ca.CertPath, doc.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(out, "gwdev certs: wrote %s to %s\n", plural(len(wanted), "Secret"), path)
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
