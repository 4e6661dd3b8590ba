package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
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
	return app.Certs(out, app.CertsArgs{Dir: dir, Flags: project.Flags{CRDs: o.crds, Trust: o.trust},
		CADir: o.caDir, Out: o.out, Validity: time.Duration(o.days) * 24 * time.Hour})
}
