package tui

import "strings"

// This file explains the loader's problems. The loader (watch) reports
// Kubernetes' field errors as text, so they are explained by their wording:
// the one place in the TUI that reads a message (internal/guard lists it).

// rootExplanation explains a problem with the watched folder itself.
const rootExplanation = "the watched folder itself is missing; gwdev keeps serving what it last loaded from it and reloads every file when the folder is back. Restore or recreate it (or start gwdev on another folder)"

// yamlExplanation explains the loader's YAML errors.
const yamlExplanation = "the file is not valid YAML, so none of its objects were reloaded; the last good version keeps serving. Fix the syntax at that line"

// loadExplanations explain load problems, matched by a fragment of the
// loader's message.
var loadExplanations = []struct{ fragment, text string }{
	{"no matches for kind", "the cluster's CRDs (--crds) do not serve this kind or apiVersion: kubectl apply refuses it. Install CRDs that serve it (the message says which), or use a kind and version they serve"},
	{"Required value", "a required field is missing; the object is rejected as the API server would reject it. Add the field"},
	{"Unsupported value", "the field only accepts the listed values. Use one of them"},
	{"unknown field", "the field is not part of the schema (a typo, or a field of another API version). Fix or remove it"},
	{"Invalid value", "the value breaks a schema rule (range, pattern or validation rule) and the object is rejected. Change the value as the message says"},
	{"Too many", "a list is longer than the schema allows. Shorten it"},
	{"Duplicate value", "a list holds the same key twice. Remove the duplicate"},
	{"already defined", "two documents define the same object; the later one is ignored. Rename or delete one"},
	{"reading", "the file or directory could not be read. Check permissions"},
	{"binary file", "gwdev reads only YAML and JSON text. Move the file out of the folder"},
	{"too large", "the file is over the size limit. Split it"},
	{"symlink", "the symlink cannot be followed. Fix or remove it"},
	{"apiVersion", "the document's apiVersion/kind is missing or unknown. Fix the header"},
	{"kind", "the document's kind is missing or unknown. Fix the header"},
}

// prunedExplanation explains a field the cluster's CRDs lack.
const prunedExplanation = "the cluster's CRDs (--crds) do not have this field: kubectl apply refuses the object, and with validation off the cluster drops the field. gwdev serves the object without it, as that cluster would. Remove the field or install CRDs that have it"

// explainLoadProblem explains one load problem.
func explainLoadProblem(p LoadProblem) string {
	if p.Root {
		return rootExplanation
	}
	if p.Pruned {
		return prunedExplanation
	}
	return explainLoad(p.Message)
}

func explainLoad(msg string) string {
	// The loader's YAML errors start with "yaml: "; other messages may hold
	// a path ending in ".yaml:" that says nothing about the syntax.
	if strings.HasPrefix(msg, "yaml: ") {
		return yamlExplanation
	}
	for _, l := range loadExplanations {
		if strings.Contains(msg, l.fragment) {
			return l.text
		}
	}
	return "the object was rejected when loading; fix it as the message says (the last good version keeps serving)"
}
