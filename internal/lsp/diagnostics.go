package lsp

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/report"
)

// onState is the Session's subscriber: it indexes the new State and
// pushes the diagnostics that changed (or asks a pulling client to pull
// again).
func (s *server) onState(st *app.State) {
	s.mu.Lock()
	texts := make(map[string]string, len(s.docs))
	for p, d := range s.docs {
		if d.refused == "" {
			texts[p] = d.text
		}
	}
	s.mu.Unlock()
	// The State was made of the buffers as they were when the watcher
	// read them; a keystroke since has its own State coming.
	v := newView(st, texts)
	diags := v.diagnostics()
	s.mu.Lock()
	first := s.view == nil
	s.view = v
	pull, refresh := s.pull, s.refresh
	var changed []protocol.PublishDiagnosticsParams
	if !pull {
		for path := range s.published {
			if _, ok := diags[path]; !ok {
				diags[path] = []protocol.Diagnostic{}
			}
		}
		for path, ds := range diags {
			if reflect.DeepEqual(s.published[path], ds) {
				continue
			}
			// No version: the State may have been made of an older text
			// of the buffer than its version now.
			changed = append(changed, protocol.PublishDiagnosticsParams{URI: uriOf(path), Diagnostics: ds})
			if len(ds) == 0 {
				delete(s.published, path)
			} else {
				s.published[path] = ds
			}
		}
	}
	s.mu.Unlock()
	if first {
		close(s.ready)
	}
	for i := range changed {
		s.notify(protocol.MethodTextDocumentPublishDiagnostics, &changed[i])
	}
	if pull && refresh && !first {
		go func() { _, _ = s.conn.Call(s.ctx, "workspace/diagnostic/refresh", nil, nil) }()
	}
}

// diagnostics are the findings of v as diagnostics, by file. A finding
// about an object no file holds (the GatewayClass gwdev manages without
// a manifest) is on the objects that name it (the class's Gateways).
func (v *view) diagnostics() map[string][]protocol.Diagnostic {
	out := map[string][]protocol.Diagnostic{}
	for _, f := range v.findings {
		if f.File != "" {
			path := absPath(f.File)
			out[path] = append(out[path], v.diagnostic(path, f))
			continue
		}
		if f.Object == nil || f.Object.Kind != "GatewayClass" {
			continue
		}
		for _, gw := range v.state.Result.Objects.Gateways {
			if string(gw.Spec.GatewayClassName) != f.Object.Name {
				continue
			}
			if pl := v.byKey[engine.ObjectKey{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name}]; pl != nil {
				at := f
				at.Line, at.Column = pl.src.Line, pl.src.Column
				out[pl.path] = append(out[pl.path], v.diagnostic(pl.path, at))
			}
		}
	}
	return out
}

// diagnostic is one finding on the range of the field it is about: from
// check's line and column to the end of that line's text.
func (v *view) diagnostic(path string, f report.Finding) protocol.Diagnostic {
	d := protocol.Diagnostic{Range: v.findingRange(path, f.Line, f.Column), Severity: severity(f.Severity), Code: f.Code,
		Source: "gwdev", Message: findingMessage(f)}
	return d
}

// findingRange is the range of a finding at line and column (1-based; 0:
// unknown): from the column to the end of the line's text.
func (v *view) findingRange(path string, line, column int) protocol.Range {
	if line < 1 {
		return protocol.Range{}
	}
	text := v.line(path, line)
	col := column - 1
	if col < 0 {
		col = len([]rune(text)) - len([]rune(strings.TrimLeft(text, " \t")))
	}
	start := utf16Column(text, col)
	end := utf16Column(text, len([]rune(strings.TrimRight(text, " \t"))))
	if end < start {
		end = start
	}
	return protocol.Range{Start: protocol.Position{Line: uint32(line - 1), Character: start},
		End: protocol.Position{Line: uint32(line - 1), Character: end}}
}

// findingMessage words a finding: what it is about, the message and the
// hint on lines of their own.
func findingMessage(f report.Finding) string {
	var b strings.Builder
	if f.Condition != "" {
		b.WriteString(f.Condition + ": ")
	}
	if f.Scope != "" {
		b.WriteString(f.Scope + ": ")
	}
	b.WriteString(f.Message)
	if f.Hint != "" {
		b.WriteString("\n" + f.Hint)
	}
	return b.String()
}

func severity(s string) protocol.DiagnosticSeverity {
	switch s {
	case "error":
		return protocol.DiagnosticSeverityError
	case "warning":
		return protocol.DiagnosticSeverityWarning
	}
	return protocol.DiagnosticSeverityInformation
}

// documentDiagnosticParams are textDocument/diagnostic's parameters (3.17).
type documentDiagnosticParams struct {
	TextDocument     protocol.TextDocumentIdentifier `json:"textDocument"`
	PreviousResultID string                          `json:"previousResultId,omitempty"`
}

// documentDiagnosticReport is a full or an unchanged report (3.17).
type documentDiagnosticReport struct {
	Kind     string                `json:"kind"`
	ResultID string                `json:"resultId,omitempty"`
	Items    []protocol.Diagnostic `json:"items,omitempty"`
}

// waitView returns the current view, waiting for the first State (nil:
// not initialized, or none came before ctx ended or within a minute).
func (s *server) waitView(ctx context.Context) *view {
	s.mu.Lock()
	started := s.session != nil
	s.mu.Unlock()
	if !started {
		return nil
	}
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil
	case <-time.After(time.Minute):
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.view
}

// pullDiagnostics answers textDocument/diagnostic with the file's
// diagnostics in the last State; the result ID is the State's reload
// number, so an unchanged State is reported as such.
func (s *server) pullDiagnostics(ctx context.Context, raw json.RawMessage) (any, error) {
	var p documentDiagnosticParams
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	path, err := pathOf(p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	v := s.waitView(ctx)
	if v == nil {
		return documentDiagnosticReport{Kind: "full", Items: []protocol.Diagnostic{}}, nil
	}
	id := strconv.Itoa(v.state.Reload)
	if p.PreviousResultID == id {
		return documentDiagnosticReport{Kind: "unchanged", ResultID: id}, nil
	}
	items := v.diagnostics()[path]
	if items == nil {
		items = []protocol.Diagnostic{}
	}
	return documentDiagnosticReport{Kind: "full", ResultID: id, Items: items}, nil
}
