package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/gwdev/gwdev/engine"
	"github.com/spf13/cobra"
)

// version is set for release builds with
// -ldflags "-X main.version=v1.2.3" (make release); "" means: read it
// from the build information Go records (go install …@v1.2.3 records the
// module version, a build from a git checkout the commit).
var version = ""

// versionInfo is what `gwdev version` prints.
type versionInfo struct {
	// Version is the release (-ldflags), the module version (go install
	// …@version), or "devel" for a build from source.
	Version string
	// Revision is the VCS commit, with "-dirty" when the tree had local
	// changes ("" when Go recorded none).
	Revision string
	// Time is the commit time (RFC 3339, "" when unknown).
	Time string
	// GoVersion is the toolchain that built the binary.
	GoVersion string
}

// buildVersion reads gwdev's version from -ldflags and the build info.
func buildVersion() versionInfo {
	bi, ok := debug.ReadBuildInfo()
	return versionFrom(version, bi, ok)
}

// versionFrom decides the version from the -ldflags value and the build
// info (ok false: none recorded).
func versionFrom(ldflags string, bi *debug.BuildInfo, ok bool) versionInfo {
	v := versionInfo{Version: ldflags}
	if !ok || bi == nil {
		if v.Version == "" {
			v.Version = "devel"
		}
		return v
	}
	v.GoVersion = bi.GoVersion
	if v.Version == "" {
		v.Version = bi.Main.Version
	}
	if v.Version == "" || v.Version == "(devel)" {
		v.Version = "devel"
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && v.Revision != "" {
		v.Revision += "-dirty"
	}
	return v
}

// String renders the version on one line:
// "v1.2.3 (commit 0123abcd…, 2026-01-02T03:04:05Z, go1.26.8)".
func (v versionInfo) String() string {
	s := v.Version
	var extra []string
	if v.Revision != "" {
		extra = append(extra, "commit "+v.Revision)
	}
	if v.Time != "" {
		extra = append(extra, v.Time)
	}
	if v.GoVersion != "" {
		extra = append(extra, v.GoVersion)
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

// versionText is what `gwdev version` and `gwdev --version` print.
func versionText() string {
	return fmt.Sprintf("gwdev %s\nGateway API %s\n", buildVersion(), engine.APIVersion)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print gwdev's version, commit and the Gateway API version it implements",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprint(cmd.OutOrStdout(), versionText())
			return nil
		},
	}
}
