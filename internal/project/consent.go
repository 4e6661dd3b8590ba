package project

import (
	"fmt"
	"strings"

	"github.com/gwdev/gwdev/internal/trust"
	"github.com/gwdev/gwdev/watch"
)

// A folder can ask gwdev to run commands (gwdev.yaml's render:) and to
// fetch from the network (a kustomization's remote resources). gwdev does
// either only with the user's consent for that folder, as direnv loads a
// folder's .envrc only once allowed: --trust on the command line (CI on a
// trusted branch), or a trust record written by `gwdev trust DIR`, kept
// outside the folder (internal/trust) and tied to its gwdev.yaml's content.
// A revision `gwdev diff` extracts is never trusted by the record, only by
// --trust-revision.

// consentSource is where a project's consent comes from.
type consentSource struct {
	// flag is --trust (or, for a diff revision, --trust-revision).
	flag bool
	// flagName names the flag in hints ("": --trust).
	flagName string
	// record says the trust record applies (false: a folder gwdev made,
	// such as a diff revision, which only the flag trusts).
	record bool
}

// of is the consent for the folder dir ("": no folder, the flag alone)
// whose gwdev.yaml holds config: given by the flag, or by a trust record
// of this folder with this gwdev.yaml. Otherwise its hint says how to give
// it; a record that cannot be read trusts nothing, and the hint says why.
func (s consentSource) of(dir string, config []byte) watch.Consent {
	flag := s.flagName
	if flag == "" {
		flag = "--trust"
	}
	if s.flag {
		return watch.Consent{Given: true}
	}
	if !s.record || dir == "" {
		return watch.Consent{Hint: "pass " + flag}
	}
	hint := fmt.Sprintf("read the folder's gwdev.yaml and kustomizations, then run `gwdev trust %s` (or pass %s)", shellWord(dir), flag)
	store, err := trust.Open()
	if err != nil {
		return watch.Consent{Hint: hint + "; " + err.Error()}
	}
	ok, err := store.Trusted(dir, config)
	if err != nil {
		return watch.Consent{Hint: hint + "; " + err.Error()}
	}
	return watch.Consent{Given: ok, Hint: hint}
}

// shellWord quotes s for a shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '~' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ReadConfigFile returns the path and content of dir's gwdev.yaml (or
// gwdev.yml): "" and nil when there is none. `gwdev trust` ties its
// record to this content.
func ReadConfigFile(dir string) (string, []byte, error) { return readConfigFile(dir) }

// ConfigRenders are the render: commands of gwdev.yaml's content data,
// read from path (a mistake is a *configError naming file:line and field).
func ConfigRenders(path string, data []byte) ([]watch.Render, error) {
	c, err := parseProjectConfig(path, data)
	if err != nil {
		return nil, err
	}
	return c.Renders, nil
}
