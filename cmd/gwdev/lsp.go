package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/gwdev/gwdev/internal/lsp"
	"github.com/gwdev/gwdev/internal/project"
)

// lspOptions are the flags of `gwdev lsp`.
type lspOptions struct {
	trust     bool
	profiles  []string
	backends  []string
	classes   []string
	crds      string
	kustomize bool
	verbose   bool
}

func newLSPCmd() *cobra.Command {
	o := &lspOptions{}
	cmd := &cobra.Command{
		Use:   "lsp [DIR]",
		Short: "Serve the Language Server Protocol over stdio: check's findings, status and references in the editor",
		Long: `lsp is a Language Server Protocol (3.17) server speaking on standard input and output, started
by an editor (see docs/editors.md). The workspace is DIR, else the editor's workspace root: the
project folder loaded exactly as check and up load it (gwdev.yaml, --crds, profiles, kustomize,
render: with the folder's consent), with the editor's unsaved buffers laid over the files on
disk. Every finding check reports is a diagnostic on the field it is about, updated as you type
in any file; hover shows an object's computed status, a parentRef's attachment and a
backendRef's resolution; definition, references, symbols, completion and quick fixes read the
same result. The server never writes a file.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := ""
			if len(args) > 0 {
				dir = args[0]
			}
			log := io.Discard
			if o.verbose {
				log = cmd.ErrOrStderr()
			}
			return lsp.Serve(context.Background(), stdio{in: cmd.InOrStdin(), out: cmd.OutOrStdout()}, lsp.Options{Dir: dir, Log: log,
				Flags: project.Flags{Backends: o.backends, Profiles: o.profiles, CRDs: o.crds, Classes: o.classes,
					NoKustomize: !o.kustomize, Trust: o.trust}})
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.backends, "backend", nil, "as for up: namespace/service:port=host:port")
	f.StringArrayVar(&o.profiles, "profile", nil, profileFlagUsage)
	f.StringSliceVar(&o.classes, "class", nil, "manage only these GatewayClass names (default: every class the Gateways name)")
	f.BoolVar(&o.kustomize, "kustomize", true, "build a folder holding a kustomization.yaml as kubectl kustomize does (false: read its files one by one)")
	f.BoolVar(&o.verbose, "verbose", false, "log the server's own messages to stderr")
	addCRDsFlag(f, &o.crds)
	addTrustFlag(f, &o.trust)
	return cmd
}

// stdio is the command's standard input and output as one stream.
type stdio struct {
	in  io.Reader
	out io.Writer
}

func (s stdio) Read(p []byte) (int, error)  { return s.in.Read(p) }
func (s stdio) Write(p []byte) (int, error) { return s.out.Write(p) }
func (s stdio) Close() error {
	if c, ok := s.in.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
