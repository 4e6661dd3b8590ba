package project

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/watch"
)

// mappingFindings warns about every backend mapping (gwdev.yaml or
// --backend) that names a Service no manifest defines, or a port that
// Service does not have: such a mapping is never used, most likely a typo.
// where gives each mapping's position ("gwdev.yaml:3:3" or "--backend").
func mappingFindings(objs *engine.Snapshot, mappings, where map[string]string) []engine.Finding {
	keys := make([]string, 0, len(mappings))
	for k := range mappings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []engine.Finding
	for _, k := range keys {
		nsName, portStr, _ := strings.Cut(k, ":")
		ns, name, _ := strings.Cut(nsName, "/")
		port, _ := strconv.Atoi(portStr)
		msg := ""
		svc := serviceNamed(objs, ns, name)
		switch {
		case svc == nil:
			msg = fmt.Sprintf("backend mapping %s → %s is not used: no manifest defines Service %s/%s", k, mappings[k], ns, name)
		case !hasPort(svc, port):
			msg = fmt.Sprintf("backend mapping %s → %s is not used: Service %s/%s has no port %d", k, mappings[k], ns, name, port)
		default:
			continue
		}
		out = append(out, engine.Finding{Severity: engine.SeverityWarning, Source: positionSource(where[k]),
			Object: engine.ObjectKey{Kind: "Service", Namespace: ns, Name: name}, Message: msg})
	}
	return out
}

func serviceNamed(objs *engine.Snapshot, ns, name string) *engine.Service {
	for _, s := range objs.Services {
		if s.Namespace == ns && s.Name == name {
			return s
		}
	}
	return nil
}

func hasPort(s *engine.Service, port int) bool {
	return slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return int(p.Port) == port })
}

// positionSource turns "file:line:column" (or "--backend") into a Source.
func positionSource(pos string) engine.Source {
	parts := strings.Split(pos, ":")
	if len(parts) >= 3 {
		if line, err := strconv.Atoi(parts[len(parts)-2]); err == nil {
			return engine.Source{File: strings.Join(parts[:len(parts)-2], ":"), Line: line}
		}
	}
	return engine.Source{File: pos}
}

// AddFindings puts extra findings into res.Findings, keeping the order
// most severe first (each extra finding after those of its severity).
func AddFindings(res *engine.Result, extra []engine.Finding) {
	for _, f := range extra {
		i := 0
		for i < len(res.Findings) && res.Findings[i].Severity.Rank() <= f.Severity.Rank() {
			i++
		}
		res.Findings = slices.Insert(res.Findings, i, f)
	}
}

// addLoadWarnings adds the loader's warnings (symlinks followed out of
// the folder, objects of Gateway API kinds gwdev does not load) to the
// result's findings, first among the warnings, so that check, --strict, the
// dashboard and the admin API show them as they show the engine's.
func addLoadWarnings(res *engine.Result, lr *watch.LoadResult) {
	addChannelNotes(res, lr)
	ws := lr.Warnings
	var skipped []engine.Finding
	for _, s := range lr.Skipped {
		if s.GatewayAPI() {
			skipped = append(skipped, engine.Finding{Severity: engine.SeverityWarning,
				Object: engine.ObjectKey{Kind: s.Kind, Namespace: s.Namespace, Name: s.Name},
				Source: engine.Source{File: s.File, Line: s.Line}, Reason: engine.ReasonNotImplemented,
				Message: engine.SkippedKindWarning(s.Kind)})
		}
	}
	if len(ws) == 0 && len(skipped) == 0 {
		return
	}
	i := 0
	for i < len(res.Findings) && res.Findings[i].Severity == engine.SeverityError {
		i++
	}
	fs := make([]engine.Finding, 0, len(res.Findings)+len(ws))
	fs = append(fs, res.Findings[:i]...)
	for _, w := range ws {
		fs = append(fs, engine.Finding{Severity: engine.SeverityWarning, Source: engine.Source{File: w.File}, Message: w.Message})
	}
	fs = append(fs, skipped...)
	res.Findings = append(fs, res.Findings[i:]...)
}

// NoManifests is what check and up say about sources where nothing loaded
// and nothing failed to load or raised a finding ("" : not the case): a
// folder with no manifests. what is what there is nothing to do ("check",
// "serve").
func NoManifests(objects, problems, findings int, where, what string) string {
	if objects > 0 || problems > 0 || findings > 0 {
		return ""
	}
	return fmt.Sprintf("No manifests found in %s: nothing to %s (gwdev reads *.yaml, *.yml and *.json files).", where, what)
}
