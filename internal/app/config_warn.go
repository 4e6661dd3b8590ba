package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gwdev/gwdev/engine"
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

func serviceNamed(objs *engine.Snapshot, ns, name string) *corev1.Service {
	for _, s := range objs.Services {
		if s.Namespace == ns && s.Name == name {
			return s
		}
	}
	return nil
}

func hasPort(s *corev1.Service, port int) bool {
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

// addFindings puts extra findings into res.Findings, keeping the order
// most severe first (each extra finding after those of its severity).
func addFindings(res *engine.Result, extra []engine.Finding) {
	for _, f := range extra {
		i := 0
		for i < len(res.Findings) && res.Findings[i].Severity.Rank() <= f.Severity.Rank() {
			i++
		}
		res.Findings = slices.Insert(res.Findings, i, f)
	}
}
