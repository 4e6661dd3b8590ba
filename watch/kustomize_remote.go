package watch

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v4"
)

// A kustomization can name remote resources: kustomize fetches a URL
// (`resources: [https://host/x.yaml]`) with net/http and clones a git URL
// (`https://github.com/org/repo//base?ref=main`, `git@host:org/repo`,
// `github.com/org/repo/base`, `file:///repo`) by running `git init`,
// `git fetch` and `git checkout` (kustomize/api's internal/loader and
// internal/git: neither can be turned off through krusty's options). So
// without the user's consent every kustomization and builtin plugin
// configuration is checked as kustomize reads it, through the filesystem
// it is given (recordingFS.ReadFile), before kustomize sees its content:
// one naming anything remote is not handed to kustomize at all, so no
// entry of it is fetched or cloned, and each remote entry is a problem at
// its file:line.

// remoteRef is a remote entry of a kustomization: where it is and what.
type remoteRef struct {
	// file is the kustomization (or plugin configuration) naming it.
	file string
	line int
	// field is the key the entry is under ("resources", "path", …).
	field string
	// ref is the entry as written.
	ref string
}

// pathFields are the keys under which a kustomization (or a builtin
// plugin's configuration) names something kustomize loads: a file through
// its loader's Load (remote: an HTTP GET) or a folder through its New
// (remote: a git clone). Only their values are checked, so that a URL in
// an annotation or a label is not taken for a resource.
var pathFields = map[string]bool{
	"resources": true, "bases": true, "components": true, "crds": true, "configurations": true,
	"patchesStrategicMerge": true, "generators": true, "transformers": true, "validators": true,
	// patches[].path, patchesJson6902[].path, replacements[].path,
	// openapi.path and PatchTransformer's path; generator sources.
	"path": true, "files": true, "envs": true, "env": true,
}

// gitUser is the user@ kustomize takes for an SCP-style git URL
// (git@github.com:org/repo).
var gitUser = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*@`)

// isRemoteRef reports whether kustomize would fetch s from the network (or
// clone it with git) rather than read it from the folder: any URL with a
// scheme (http, https, ssh, file: the last runs git too), an SCP-style
// user@host:path, or a github.com/… path. It errs on the side of remote,
// as kustomize's own parsing (NewRepoSpecFromURL) accepts more than it
// fetches.
func isRemoteRef(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || strings.Contains(s, "\n") {
		return false // an inline configuration, not a path
	}
	low := strings.ToLower(s)
	low = strings.TrimPrefix(low, "git::")
	if i := strings.Index(low, "://"); i > 0 {
		return true
	}
	return gitUser.MatchString(low) || strings.HasPrefix(low, "github.com/") || strings.HasPrefix(low, "github.com:")
}

// remoteRefs lists the remote entries of a kustomization file's or plugin
// configuration's content (nil when there is none or it does not parse:
// kustomize then words the error, and fetches nothing from a file it
// cannot read).
func remoteRefs(file string, data []byte) []remoteRef {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil
	}
	var out []remoteRef
	var walk func(n *yaml.Node)
	check := func(field string, v *yaml.Node) {
		if v.Kind != yaml.ScalarNode {
			return
		}
		ref := v.Value
		// A generator source is "key=path" or "path".
		_, after, hasKey := strings.Cut(ref, "=")
		if isRemoteRef(ref) || (field != "path" && hasKey && isRemoteRef(after)) {
			out = append(out, remoteRef{file: file, line: v.Line, field: field, ref: ref})
		}
	}
	walk = func(n *yaml.Node) {
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if pathFields[k.Value] {
					check(k.Value, v)
					if v.Kind == yaml.SequenceNode {
						for _, item := range v.Content {
							check(k.Value, item)
						}
					}
				}
				walk(v)
			}
		}
	}
	walk(&doc)
	return out
}

// isPluginConfig reports whether data is the configuration of a builtin
// kustomize plugin (apiVersion: builtin), which a kustomization's
// generators:, transformers: or validators: name by file.
func isPluginConfig(data []byte) bool {
	var head struct {
		APIVersion string `yaml:"apiVersion"`
	}
	return yaml.Unmarshal(data, &head) == nil && head.APIVersion == "builtin"
}

// refuseRemote returns the remote entries of the file at path (absolute)
// when kustomize would fetch them, for a kustomization file or a plugin
// configuration; nil for any other file.
func refuseRemote(path string, data []byte) []remoteRef {
	if !isKustomizationName(filepath.Base(path)) && !isPluginConfig(data) {
		return nil
	}
	return remoteRefs(path, data)
}

// remoteProblems says, for each remote entry a build did not fetch, what
// was not fetched and how to allow it.
func remoteProblems(b *kustomizeBuild, consent Consent) []Problem {
	out := make([]Problem, 0, len(b.remote))
	for _, r := range b.remote {
		file := r.file
		if rel, err := filepath.Rel(mustAbs(b.dir), r.file); err == nil && !filepath.IsAbs(b.dir) {
			file = filepath.Join(b.dir, rel)
		}
		out = append(out, Problem{File: file, Line: r.line, Field: r.field, Kind: ProblemNotAllowed,
			Message: consent.refusal(fmt.Sprintf("%s: %q is remote: not fetched, so %s was not built and its objects are not loaded or checked",
				r.field, r.ref, b.name), "gwdev fetches a folder's remote resources only with your consent for that folder")})
	}
	return out
}

// mustAbs is filepath.Abs, or p when that fails.
func mustAbs(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
