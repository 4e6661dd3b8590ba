package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gwdev/gwdev/engine"
)

// SARIFLog is a SARIF 2.1.0 log
// (https://docs.oasis-open.org/sarif/sarif/v2.1.0/): the subset gwdev
// writes. Every result names its rule (one per finding code,
// with the code's explanation as help), a level and a physical location;
// a finding without a file (a GatewayClass gwdev stands in for) is a
// notification of the invocation instead, as GitHub code scanning refuses
// results without a location.
type SARIFLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []SARIFRun `json:"runs"`
}

// SARIFRun is one run of a tool: the tool with its rules, the invocation
// and the results.
type SARIFRun struct {
	Tool        SARIFTool         `json:"tool"`
	Invocations []SARIFInvocation `json:"invocations"`
	Results     []SARIFResult     `json:"results"`
}

// SARIFInvocation is the run of gwdev; its notifications are the findings
// that have no file (GitHub code scanning takes only results with one).
type SARIFInvocation struct {
	ExecutionSuccessful bool                `json:"executionSuccessful"`
	Notifications       []SARIFNotification `json:"toolExecutionNotifications,omitempty"`
}

// SARIFNotification is a finding without a file, reported on the
// invocation. Its descriptor is in the driver's notifications, not its
// rules: the rules are what results break (SARIF 2.1.0 §3.19.23,
// §3.58.7), so a code only ever reported without a file declares no rule
// that code scanning would list with no result.
type SARIFNotification struct {
	Level      string       `json:"level"`
	Message    SARIFText    `json:"message"`
	Descriptor SARIFRuleRef `json:"descriptor"`
}

// SARIFRuleRef names a rule (or a notification descriptor) by id and
// index in the driver's rules (notifications).
type SARIFRuleRef struct {
	ID    string `json:"id"`
	Index int    `json:"index"`
}

// SARIFTool is the tool that ran: gwdev.
type SARIFTool struct {
	Driver SARIFDriver `json:"driver"`
}

// SARIFDriver is gwdev with its version, the rules of the run's results
// (each code with a result, once) and the descriptors of its
// notifications (each code of a finding without a file, once).
type SARIFDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Version        string      `json:"version,omitempty"`
	Rules          []SARIFRule `json:"rules"`
	Notifications  []SARIFRule `json:"notifications,omitempty"`
}

// SARIFRule is one finding code with its explanation and its default
// level (the most severe of its findings).
type SARIFRule struct {
	ID                   string          `json:"id"`
	Name                 string          `json:"name"`
	ShortDescription     SARIFText       `json:"shortDescription"`
	FullDescription      SARIFText       `json:"fullDescription"`
	Help                 SARIFText       `json:"help"`
	DefaultConfiguration SARIFRuleConfig `json:"defaultConfiguration"`
}

// SARIFRuleConfig is a rule's default level.
type SARIFRuleConfig struct {
	Level string `json:"level"`
}

// SARIFText is a plain text message.
type SARIFText struct {
	Text string `json:"text"`
}

// SARIFResult is one finding with a file: its rule, level, message,
// location and a fingerprint stable across line moves.
type SARIFResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             SARIFText         `json:"message"`
	Locations           []SARIFLocation   `json:"locations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
}

// SARIFLocation is where a result is: the file and line, and the object
// and field (nil or empty: unknown).
type SARIFLocation struct {
	PhysicalLocation *SARIFPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []SARIFLogical `json:"logicalLocations,omitempty"`
}

// SARIFPhysical is a file and a region in it.
type SARIFPhysical struct {
	ArtifactLocation SARIFArtifact `json:"artifactLocation"`
	Region           *SARIFRegion  `json:"region,omitempty"`
}

// SARIFArtifact is a file by URI (relative to the repository root, or
// file://).
type SARIFArtifact struct {
	URI string `json:"uri"`
}

// SARIFRegion is a line and column, 1-based (column 0: unknown).
type SARIFRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

// SARIFLogical is the object (and field) a result is about.
type SARIFLogical struct {
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// sarifLevel maps a severity to a SARIF level (error, warning, note).
func sarifLevel(severity string) string {
	switch GitHubLevel(severity) {
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

// WriteSARIF writes the findings as one SARIF 2.1.0 run of tool gwdev at
// version ("": left out), indented, with a final newline.
func WriteSARIF(out io.Writer, fs []Finding, version string) error {
	run := SARIFRun{Tool: SARIFTool{Driver: SARIFDriver{Name: "gwdev", InformationURI: "https://github.com/gwdev/gwdev",
		Version: version}}, Results: []SARIFResult{}}
	inv := SARIFInvocation{ExecutionSuccessful: true}
	// Rules for the codes of results (findings with a file), descriptors
	// for the codes of notifications (without one), each sorted.
	ruleIndex, noteIndex := map[string]int{}, map[string]int{}
	var codes, noteCodes []string
	for _, m := range fs {
		index, list := ruleIndex, &codes
		if m.File == "" {
			index, list = noteIndex, &noteCodes
		}
		if _, ok := index[m.Code]; !ok {
			index[m.Code] = -1
			*list = append(*list, m.Code)
		}
	}
	slices.Sort(codes)
	slices.Sort(noteCodes)
	run.Tool.Driver.Rules = []SARIFRule{}
	for i, c := range codes {
		ruleIndex[c] = i
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRuleFor(c, fs))
	}
	for i, c := range noteCodes {
		noteIndex[c] = i
		run.Tool.Driver.Notifications = append(run.Tool.Driver.Notifications, sarifRuleFor(c, fs))
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
			inv.Notifications = append(inv.Notifications, SARIFNotification{Level: sarifLevel(m.Severity), Message: SARIFText{msg},
				Descriptor: SARIFRuleRef{ID: m.Code, Index: noteIndex[m.Code]}})
			continue
		}
		r := SARIFResult{RuleID: m.Code, RuleIndex: ruleIndex[m.Code], Level: sarifLevel(m.Severity), Message: SARIFText{msg}}
		// A finding about a whole file (a symlink followed out of the
		// folder) points at its first line: code scanning wants a line.
		loc := SARIFLocation{PhysicalLocation: &SARIFPhysical{ArtifactLocation: SARIFArtifact{URI: sarifURI(m.File)},
			Region: &SARIFRegion{StartLine: max(m.Line, 1), StartColumn: m.Column}}}
		if m.Object != nil {
			name := m.Object.String()
			if m.Field != "" {
				name += "." + m.Field
			}
			loc.LogicalLocations = []SARIFLogical{{FullyQualifiedName: name, Kind: "object"}}
		}
		r.Locations = []SARIFLocation{loc}
		// One result per object, code and message across runs, whatever
		// line it moves to.
		key := m.Code + "|" + m.Message
		if m.Object != nil {
			key = m.Object.String() + "|" + m.Field + "|" + key
		}
		r.PartialFingerprints = map[string]string{"gwdevFinding/v1": fingerprint(key)}
		run.Results = append(run.Results, r)
	}
	run.Invocations = []SARIFInvocation{inv}
	b, err := json.MarshalIndent(SARIFLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []SARIFRun{run}}, "", "  ")
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
func sarifRuleFor(code string, fs []Finding) SARIFRule {
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
	case CodeLoadError:
		help = "The manifest was refused when loading, as kubectl apply would refuse it (schema, YAML syntax or a duplicate object): it is not part of the translation. Fix it as the message says."
		short = "a manifest gwdev could not load"
	case CodeLoadWarning:
		help = "The loader noticed something about a file (a symlink followed out of the folder, …); it was loaded."
		short = "a note from the loader"
	case CodeNote:
		short = "one of gwdev's own notes"
	default:
		if h := engine.ReasonHint("", code); h != "" {
			help = h
			short = "condition reason " + code
		}
	}
	if help == "" {
		help = "See the result's message."
	}
	full, _, _ := strings.Cut(help, ". Fix")
	return SARIFRule{ID: code, Name: code, ShortDescription: SARIFText{short}, FullDescription: SARIFText{full},
		Help: SARIFText{help}, DefaultConfiguration: SARIFRuleConfig{level}}
}
