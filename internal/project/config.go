package project

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/gwdev/gwdev/watch"
)

// projectConfig is gwdev.yaml in the project root.
type projectConfig struct {
	// Backends maps "namespace/service:port" (or "service:port" in default)
	// to a local "host:port" that serves it.
	Backends map[string]string
	// Profiles maps GatewayClass names to implementation profiles
	// (profiles.go).
	Profiles map[string]string
	// YCCertificates gives the local PEM files of gwin YCCertificate
	// references, keyed by "namespace/name" (profiles.go).
	YCCertificates map[string]ycCertificateFiles
	// CRDs is the CRD bundle to judge manifests against: an embedded
	// bundle's name or a file of `kubectl get crd -o yaml` relative to
	// gwdev.yaml's folder ("": the newest experimental CRDs); see crds.go.
	CRDs string
	// Renders are the render: commands, whose output is loaded like a
	// manifest file (watch.Render; Dir is gwdev.yaml's folder).
	Renders []watch.Render
	// where maps "backends.KEY" (and the other sections' keys) to the
	// entry's position (nil: no file).
	where map[string]configPos
	// data is the file's content (nil: no file), which the user's consent
	// to run its commands is tied to (internal/trust).
	data []byte
}

// configPos is where an entry of gwdev.yaml is.
type configPos struct {
	File         string
	Line, Column int
}

func (p configPos) String() string {
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}

// configError is a mistake in gwdev.yaml, placed at file:line:column and
// naming the field.
type configError struct {
	File         string
	Line, Column int
	// Field is the path of the offending entry, such as
	// `backends."default/api:8080"` ("" for the file as a whole).
	Field   string
	Message string
	// Kind is the load problem's kind (watch.ProblemUnknownField for an
	// unknown field; "": none).
	Kind watch.ProblemKind
}

func (e *configError) Error() string {
	pos := e.File
	if e.Line > 0 {
		pos = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Column)
	}
	if e.Field == "" {
		return pos + ": " + e.Message
	}
	return pos + ": " + e.Field + ": " + e.Message
}

// problem is e as a load problem (the dashboard's Problems view and up's
// plain lines show it with the manifests' problems).
func (e *configError) problem() watch.Problem {
	msg := e.Message
	if e.Field != "" {
		msg = e.Field + ": " + msg
	}
	return watch.Problem{File: e.File, Line: e.Line, Column: e.Column, Field: e.Field, Message: msg, Kind: e.Kind}
}

// backendKey matches "ns/name:port" or "name:port".
var backendKey = regexp.MustCompile(`^(?:([a-z0-9]([-a-z0-9]*[a-z0-9])?)/)?([a-z0-9]([-a-z0-9]*[a-z0-9])?):([0-9]{1,5})$`)

// configNames are the file names gwdev.yaml may have, in order of preference.
var configNames = []string{"gwdev.yaml", "gwdev.yml"}

// loadProjectConfig reads gwdev.yaml (or gwdev.yml) from dir; a missing file
// is an empty config. Its errors are *configError (file:line:column, field)
// or the file's read error.
func loadProjectConfig(dir string) (*projectConfig, string, error) {
	p, data, err := readConfigFile(dir)
	if p == "" || err != nil {
		return &projectConfig{}, p, err
	}
	c, err := parseProjectConfig(p, data)
	if c != nil {
		c.data = data
	}
	return c, p, err
}

// readConfigFile reads dir's gwdev.yaml (or gwdev.yml): its path and
// content, "" and nil when there is none.
func readConfigFile(dir string) (string, []byte, error) {
	for _, name := range configNames {
		p := filepath.Join(dir, name)
		data, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		return p, data, err
	}
	return "", nil, nil
}

// parseProjectConfig decodes gwdev.yaml from data, refusing unknown keys
// and values of the wrong shape with their position.
func parseProjectConfig(file string, data []byte) (*projectConfig, error) {
	// The decoder refuses an alias bomb too, but after some work and
	// without a position; this check words it with file:line.
	if err := watch.CheckAliases(file, data); err != nil {
		return nil, err
	}
	c := &projectConfig{where: map[string]configPos{}}
	dec, err := yaml.NewLoader(bytes.NewReader(data))
	if err != nil {
		return nil, &configError{File: file, Message: err.Error()}
	}
	var doc yaml.Node
	if err := dec.Load(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return c, nil // empty or only comments
		}
		ce := &configError{File: file, Message: err.Error()}
		var le *yaml.LoadError
		if errors.As(err, &le) {
			ce.Line, ce.Column, ce.Message = le.Mark.Line, le.Mark.Column, "not valid YAML: "+le.Message
		}
		return nil, ce
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return c, nil
	}
	p := configParser{file: file, c: c}
	if err := p.top(root); err != nil {
		return nil, err
	}
	return c, nil
}

// configParser walks gwdev.yaml's node tree.
type configParser struct {
	file string
	c    *projectConfig
}

func (p *configParser) fail(n *yaml.Node, field, format string, args ...any) error {
	return &configError{File: p.file, Line: n.Line, Column: n.Column, Field: field, Message: fmt.Sprintf(format, args...)}
}

// unknownField is fail for a field gwdev.yaml does not have.
func (p *configParser) unknownField(n *yaml.Node, field, format string, args ...any) error {
	err := p.fail(n, field, format, args...)
	err.(*configError).Kind = watch.ProblemUnknownField
	return err
}

func (p *configParser) at(n *yaml.Node) configPos {
	return configPos{File: p.file, Line: n.Line, Column: n.Column}
}

// kindWord names a node's kind as the error messages do.
func kindWord(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	return fmt.Sprintf("%q", n.Value)
}

func (p *configParser) top(root *yaml.Node) error {
	if root.Kind != yaml.MappingNode {
		return p.fail(root, "", "want a mapping with backends:, profiles:, ycCertificates:, crds: or render:, not %s", kindWord(root))
	}
	sections := []string{"backends", "profiles", "ycCertificates", "crds", "render"}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		var err error
		switch k.Value {
		case "backends":
			p.c.Backends, err = p.strings(k.Value, v)
		case "profiles":
			p.c.Profiles, err = p.strings(k.Value, v)
		case "ycCertificates":
			err = p.ycCertificates(v)
		case "crds":
			if v.Kind != yaml.ScalarNode || v.Tag == "!!null" || v.Value == "" {
				return p.fail(v, k.Value, "want a bundle name (gwdev crds list) or a file of kubectl get crd -o yaml, not %s", kindWord(v))
			}
			p.c.CRDs = v.Value
			p.c.where["crds"] = p.at(v)
		case "render":
			err = p.renders(v)
		default:
			return p.unknownField(k, k.Value, "unknown field (gwdev.yaml has %s)", strings.Join(sections, ", "))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// strings decodes a mapping of strings to strings, recording where each
// entry is.
func (p *configParser) strings(section string, n *yaml.Node) (map[string]string, error) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, p.fail(n, section, "want a mapping of KEY: VALUE, not %s", kindWord(n))
	}
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := fmt.Sprintf("%s.%q", section, k.Value)
		if k.Kind != yaml.ScalarNode {
			return nil, p.fail(k, section, "a key must be a string, not %s", kindWord(k))
		}
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return nil, p.fail(v, field, "want a string value, not %s", kindWord(v))
		}
		if _, dup := out[k.Value]; dup {
			return nil, p.fail(k, field, "given twice")
		}
		out[k.Value] = v.Value
		p.c.where[section+"."+k.Value] = p.at(k)
	}
	return out, nil
}

func (p *configParser) ycCertificates(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return p.fail(n, "ycCertificates", "want a mapping of namespace/name: {cert: FILE, key: FILE}, not %s", kindWord(n))
	}
	p.c.YCCertificates = map[string]ycCertificateFiles{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := fmt.Sprintf("ycCertificates.%q", k.Value)
		m, err := p.strings(field, v)
		if err != nil {
			return err
		}
		var f ycCertificateFiles
		for name, val := range m {
			switch name {
			case "cert":
				f.Cert = val
			case "key":
				f.Key = val
			default:
				return p.unknownField(v, field+"."+name, "unknown field (want cert and key)")
			}
		}
		p.c.YCCertificates[k.Value] = f
		p.c.where["ycCertificates."+k.Value] = p.at(k)
	}
	return nil
}

// renders decodes render: a list of {command: "…", watch: [paths]}.
func (p *configParser) renders(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	const want = "want a list of {command: COMMAND, watch: [FILE or FOLDER, …]}"
	if n.Kind != yaml.SequenceNode {
		return p.fail(n, "render", "%s, not %s", want, kindWord(n))
	}
	dir := filepath.Dir(p.file)
	for i, item := range n.Content {
		field := fmt.Sprintf("render[%d]", i)
		if item.Kind != yaml.MappingNode {
			return p.fail(item, field, "%s, not %s", want, kindWord(item))
		}
		r := watch.Render{Index: i, Dir: dir}
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j], item.Content[j+1]
			switch k.Value {
			case "command":
				if v.Kind != yaml.ScalarNode || v.Tag == "!!null" || strings.TrimSpace(v.Value) == "" {
					return p.fail(v, field+".command", "want the command as a string, not %s", kindWord(v))
				}
				r.Command = v.Value
			case "watch":
				if v.Kind != yaml.SequenceNode {
					return p.fail(v, field+".watch", "want a list of files and folders, not %s", kindWord(v))
				}
				for wi, w := range v.Content {
					if w.Kind != yaml.ScalarNode || w.Tag == "!!null" || w.Value == "" {
						return p.fail(w, fmt.Sprintf("%s.watch[%d]", field, wi), "want a file or folder path, not %s", kindWord(w))
					}
					r.Watch = append(r.Watch, w.Value)
				}
			default:
				return p.unknownField(k, field+"."+k.Value, "unknown field (want command and watch)")
			}
		}
		if r.Command == "" {
			return p.fail(item, field+".command", "required: the command whose output is loaded")
		}
		p.c.Renders = append(p.c.Renders, r)
		p.c.where[field] = p.at(item)
	}
	return nil
}

// backendMappings merges gwdev.yaml backends with --backend flags
// ("ns/name:port=host:port"; flags win) into engine keys "ns/name:port".
// where maps each key to the place it was given ("gwdev.yaml:3:3" or
// "--backend"). A mistake in gwdev.yaml is a *configError.
func backendMappings(cfg *projectConfig, flags []string) (out, where map[string]string, err error) {
	out, where = map[string]string{}, map[string]string{}
	add := func(key, target string) (string, string) {
		m := backendKey.FindStringSubmatch(key)
		if m == nil {
			return "", fmt.Sprintf("%q is not namespace/service:port", key)
		}
		if !strings.Contains(target, ":") {
			return "", fmt.Sprintf("target %q is not host:port", target)
		}
		ns := m[1]
		if ns == "" {
			ns = "default"
		}
		return ns + "/" + m[3] + ":" + m[5], ""
	}
	keys := make([]string, 0, len(cfg.Backends))
	for k := range cfg.Backends {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		pos := cfg.where["backends."+k]
		key, bad := add(k, cfg.Backends[k])
		if bad != "" {
			return nil, nil, &configError{File: pos.File, Line: pos.Line, Column: pos.Column, Field: fmt.Sprintf("backends.%q", k), Message: bad}
		}
		out[key], where[key] = cfg.Backends[k], pos.String()
	}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, nil, fmt.Errorf("--backend %q: want namespace/service:port=host:port", f)
		}
		key, bad := add(k, v)
		if bad != "" {
			return nil, nil, fmt.Errorf("--backend %q: %s", f, bad)
		}
		out[key], where[key] = v, "--backend"
	}
	return out, where, nil
}
