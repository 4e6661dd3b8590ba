package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/tui"
	"github.com/gwdev/gwdev/watch"
)

// Codes of the findings that carry no condition reason.
const (
	// codeLoadError is a manifest the loader refused (not loaded).
	codeLoadError = "LoadError"
	// codeLoadWarning is a loader warning (a symlink followed out of the
	// folder, …).
	codeLoadWarning = "LoadWarning"
	// codeNote is one of gwdev's own notes without a reason.
	codeNote = "Note"
)

// machineFinding is one finding as the machine formats write it (check
// -o json|yaml, --format github|sarif, and diff's github and sarif): the
// engine's findings and the loader's problems and warnings, typed, with the
// explanation the dashboard shows as its hint.
type machineFinding struct {
	// Severity is error, warning or info.
	Severity string `json:"severity"`
	// Code is the condition reason (NotAllowedByListeners, ShadowedRule,
	// …), or LoadError, LoadWarning or Note for findings without one.
	Code string `json:"code"`
	// Condition is "Type=Status" for a finding from a status condition.
	Condition string `json:"condition,omitempty"`
	// Object is the object the finding is about (nil: a file, not an object).
	Object *engine.ObjectKey `json:"object,omitempty"`
	// Parent is the Gateway or ListenerSet of the route's parentRef.
	Parent *engine.ObjectKey `json:"parent,omitempty"`
	// Scope narrows the finding in words (`listener "https"`, `parentRefs[0]: …`).
	Scope string `json:"scope,omitempty"`
	// Field is the path of the field inside the object.
	Field string `json:"field,omitempty"`
	// File, Line and Column locate it (1-based; 0 is unknown): the field's
	// key or list item when the finding has a field path the loader
	// recorded, else the object's first field.
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Message string `json:"message"`
	// Hint says what the finding means and how to fix it ("" : none).
	Hint string `json:"hint,omitempty"`
}

// machineFindings lists the load problems (errors, first) and the result's
// findings (which hold the loader's warnings, see addLoadWarnings) in the
// order check's summary prints them.
func machineFindings(lr *watch.LoadResult, res *engine.Result) []machineFinding {
	out := make([]machineFinding, 0, len(lr.Problems)+len(res.Findings)) // never nil: -o json writes "findings": []
	for _, p := range lr.Problems {
		m := machineFinding{Severity: string(engine.SeverityError), Code: codeLoadError, Field: p.Field,
			File: p.File, Line: p.Line, Column: p.Column, Message: p.Message, Hint: p.Hint()}
		if p.Object != (engine.ObjectKey{}) {
			m.Object = &p.Object
		}
		out = append(out, m)
	}
	for _, f := range res.Findings {
		m := machineFinding{Severity: string(f.Severity), Code: f.Reason, Condition: f.Condition(), Scope: f.Scope,
			Field: f.Field, File: f.Source.File, Line: f.Source.Line, Column: f.Source.Column, Message: f.Message, Hint: tui.FindingHint(f)}
		if f.Object != (engine.ObjectKey{}) {
			m.Object = &f.Object
		}
		if f.Parent != (engine.ObjectKey{}) {
			m.Parent = &f.Parent
		}
		if m.Code == "" {
			m.Code = codeNote
			if m.Object == nil {
				m.Code = codeLoadWarning
			}
		}
		out = append(out, m)
	}
	return out
}

// subject names what a finding is about: the object, then its scope
// ("" : a file, not an object).
func (m machineFinding) subject() string {
	if m.Object == nil {
		return strings.TrimSpace(m.Scope)
	}
	return strings.TrimSpace(m.Object.String() + " " + m.Scope)
}

// title is the annotation's title: "gwdev: " and the subject.
func (m machineFinding) title() string {
	if s := m.subject(); s != "" {
		return "gwdev: " + s
	}
	return "gwdev"
}

// findingsDoc is the last document of check -o yaml: the findings beside
// the objects, in a kind of gwdev's own that no cluster serves.
type findingsDoc struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Findings   []machineFinding `json:"findings"`
}

// writeFindingsYAML appends the findings document to check -o yaml's stream.
func writeFindingsYAML(w io.Writer, fs []machineFinding) error {
	if fs == nil {
		fs = []machineFinding{}
	}
	var (
		tree jsonTree
		em   yamlEmitter
	)
	b, err := appendObjectYAML(&tree, &em, nil, findingsDoc{APIVersion: "gwdev.dev/v1alpha1", Kind: "CheckFindings", Findings: fs})
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, "---\n"); err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// githubLevel maps a severity to a workflow command (error, warning, notice).
func githubLevel(severity string) string {
	switch severity {
	case string(engine.SeverityError):
		return "error"
	case string(engine.SeverityWarning):
		return "warning"
	}
	return "notice"
}

// writeGitHub writes one GitHub Actions workflow command per finding,
// `::error file=F,line=L,col=C,title=T::message`, the hint on a line of its
// own inside the message.
func writeGitHub(out io.Writer, fs []machineFinding) {
	for _, m := range fs {
		props := []string{}
		if m.File != "" {
			props = append(props, "file="+escapeProperty(filepath.ToSlash(m.File)))
			if m.Line > 0 {
				props = append(props, "line="+strconv.Itoa(m.Line))
				if m.Column > 0 {
					props = append(props, "col="+strconv.Itoa(m.Column))
				}
			}
		}
		props = append(props, "title="+escapeProperty(m.title()))
		msg := m.Message
		if m.Condition != "" {
			msg = m.Condition + " " + m.Code + ": " + msg
		}
		if m.Hint != "" {
			msg += "\nHint: " + m.Hint
		}
		fmt.Fprintf(out, "::%s %s::%s\n", githubLevel(m.Severity), strings.Join(props, ","), escapeData(msg))
	}
}

// githubSummary is the plain line after check's annotations.
func githubSummary(fs []machineFinding) string {
	n := map[string]int{}
	for _, m := range fs {
		n[githubLevel(m.Severity)]++
	}
	return fmt.Sprintf("gwdev check: %s, %s, %s", plural(n["error"], "error"), plural(n["warning"], "warning"), plural(n["notice"], "note"))
}

// SARIF 2.1.0 (https://docs.oasis-open.org/sarif/sarif/v2.1.0/): the
// subset gwdev writes. Every result names its rule (one per finding code,
// with the code's explanation as help), a level and a physical location;
// a finding without a file (a GatewayClass gwdev stands in for) is a
// notification of the invocation instead, as GitHub code scanning refuses
// results without a location.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
}

// sarifInvocation is the run of gwdev; its notifications are the findings
// that have no file (GitHub code scanning takes only results with one).
type sarifInvocation struct {
	ExecutionSuccessful bool                `json:"executionSuccessful"`
	Notifications       []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level          string       `json:"level"`
	Message        sarifText    `json:"message"`
	AssociatedRule sarifRuleRef `json:"associatedRule"`
}

type sarifRuleRef struct {
	ID    string `json:"id"`
	Index int    `json:"index"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Version        string      `json:"version,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string       `json:"id"`
	Name                 string       `json:"name"`
	ShortDescription     sarifText    `json:"shortDescription"`
	FullDescription      sarifText    `json:"fullDescription"`
	Help                 sarifText    `json:"help"`
	DefaultConfiguration sarifRuleCfg `json:"defaultConfiguration"`
}

type sarifRuleCfg struct {
	Level string `json:"level"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

type sarifLogical struct {
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// sarifLevel maps a severity to a SARIF level (error, warning, note).
func sarifLevel(severity string) string {
	switch githubLevel(severity) {
	case "error":
		return "error"
	case "warning":
		return "warning"
	}
	return "note"
}

// sarifURI is a finding's file as a SARIF artifact URI: relative paths
// with forward slashes (GitHub resolves them against the repository root),
// absolute ones as file:// URIs.
func sarifURI(file string) string {
	if filepath.IsAbs(file) {
		return "file://" + filepath.ToSlash(file)
	}
	return strings.TrimPrefix(filepath.ToSlash(filepath.Clean(file)), "./")
}

// writeSARIF writes the findings as one SARIF 2.1.0 run of tool gwdev.
func writeSARIF(out io.Writer, fs []machineFinding) error {
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "gwdev", InformationURI: "https://github.com/gwdev/gwdev",
		Version: buildVersion().Version}}, Results: []sarifResult{}}
	inv := sarifInvocation{ExecutionSuccessful: true}
	ruleIndex := map[string]int{}
	var codes []string
	for _, m := range fs {
		if _, ok := ruleIndex[m.Code]; !ok {
			ruleIndex[m.Code] = -1
			codes = append(codes, m.Code)
		}
	}
	slices.Sort(codes)
	for i, c := range codes {
		ruleIndex[c] = i
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRuleFor(c, fs))
	}
	for _, m := range fs {
		msg := m.Message
		if m.Condition != "" {
			msg = m.Condition + " " + m.Code + ": " + msg
		}
		if s := m.subject(); s != "" {
			msg = s + ": " + msg
		}
		if m.Hint != "" {
			msg += "\nHint: " + m.Hint
		}
		if m.File == "" {
			inv.Notifications = append(inv.Notifications, sarifNotification{Level: sarifLevel(m.Severity), Message: sarifText{msg},
				AssociatedRule: sarifRuleRef{ID: m.Code, Index: ruleIndex[m.Code]}})
			continue
		}
		r := sarifResult{RuleID: m.Code, RuleIndex: ruleIndex[m.Code], Level: sarifLevel(m.Severity), Message: sarifText{msg}}
		// A finding about a whole file (a symlink followed out of the
		// folder) points at its first line: code scanning wants a line.
		loc := sarifLocation{PhysicalLocation: &sarifPhysical{ArtifactLocation: sarifArtifact{URI: sarifURI(m.File)},
			Region: &sarifRegion{StartLine: max(m.Line, 1), StartColumn: m.Column}}}
		if m.Object != nil {
			name := m.Object.String()
			if m.Field != "" {
				name += "." + m.Field
			}
			loc.LogicalLocations = []sarifLogical{{FullyQualifiedName: name, Kind: "object"}}
		}
		r.Locations = []sarifLocation{loc}
		// One result per object, code and message across runs, whatever
		// line it moves to.
		key := m.Code + "|" + m.Message
		if m.Object != nil {
			key = m.Object.String() + "|" + m.Field + "|" + key
		}
		r.PartialFingerprints = map[string]string{"gwdevFinding/v1": fingerprint(key)}
		run.Results = append(run.Results, r)
	}
	run.Invocations = []sarifInvocation{inv}
	b, err := json.MarshalIndent(sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}}, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}

// fingerprint is a short stable hash of key.
func fingerprint(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:8])
}

// sarifRuleFor describes the rule of a finding code: its explanation when
// gwdev has one (the help text the dashboard shows), else the first
// finding's own hint; its default level is the most severe of its findings.
func sarifRuleFor(code string, fs []machineFinding) sarifRule {
	level, help := "note", ""
	for _, m := range fs {
		if m.Code != code {
			continue
		}
		if l := sarifLevel(m.Severity); l == "error" || (l == "warning" && level == "note") {
			level = l
		}
		if help == "" {
			help = m.Hint
		}
	}
	short := code
	switch code {
	case codeLoadError:
		help = "The manifest was refused when loading, as kubectl apply would refuse it (schema, YAML syntax or a duplicate object): it is not part of the translation. Fix it as the message says."
		short = "a manifest gwdev could not load"
	case codeLoadWarning:
		help = "The loader noticed something about a file (a symlink followed out of the folder, …); it was loaded."
		short = "a note from the loader"
	case codeNote:
		short = "one of gwdev's own notes"
	default:
		if h := tui.ReasonHint(code); h != "" {
			help = h
			short = "condition reason " + code
		}
	}
	if help == "" {
		help = "See the result's message."
	}
	full, _, _ := strings.Cut(help, ". Fix")
	return sarifRule{ID: code, Name: code, ShortDescription: sarifText{short}, FullDescription: sarifText{full},
		Help: sarifText{help}, DefaultConfiguration: sarifRuleCfg{level}}
}
