package watch

import "fmt"

// What a load problem means and how to fix it, by its kind: the loader
// knows what it found, so it says so here, and the TUI's Problems view and
// check's machine output show Problem.Hint without reading the message.

// rootHint explains a problem with the watched folder itself.
const rootHint = "the watched folder itself is missing; gwdev keeps serving what it last loaded from it and reloads every file when the folder is back. Restore or recreate it (or start gwdev on another folder)"

// prunedHint explains a field the chosen CRD bundle lacks.
const prunedHint = "the cluster's CRDs (--crds) do not have this field: kubectl apply refuses the object, and with validation off the cluster drops the field. gwdev serves the object without it, as that cluster would. Remove the field or install CRDs that have it"

// otherHint explains a problem of no ProblemKind.
const otherHint = "the object was rejected when loading; fix it as the message says (the last good version keeps serving)"

// problemHints explain each ProblemKind.
var problemHints = map[ProblemKind]string{
	ProblemYAML:           "the file is not valid YAML, so none of its objects were reloaded; the last good version keeps serving. Fix the syntax at that line",
	ProblemNotServed:      "the cluster's CRDs (--crds) do not serve this kind or apiVersion: kubectl apply refuses it. Install CRDs that serve it (the message says which), or use a kind and version they serve",
	ProblemRequired:       "a required field is missing; the object is rejected as the API server would reject it. Add the field",
	ProblemUnsupported:    "the field only accepts the listed values. Use one of them",
	ProblemUnknownField:   "the field is not part of the schema (a typo, or a field of another API version). Fix or remove it",
	ProblemInvalid:        "the value breaks a schema rule (range, pattern or validation rule) and the object is rejected. Change the value as the message says",
	ProblemTooMany:        "a list is longer than the schema allows. Shorten it",
	ProblemDuplicate:      "a list holds the same key twice. Remove the duplicate",
	ProblemAlreadyDefined: "two documents define the same object; the later one is ignored. Rename or delete one",
	ProblemUnreadable:     "the file or directory could not be read. Check permissions",
	ProblemBinary:         "gwdev reads only YAML and JSON text. Move the file out of the folder",
	ProblemTooLarge:       fmt.Sprintf("the file is over the limit of %d MiB or %d documents, so none of it was loaded. Split it into smaller files", MaxFileSize>>20, MaxFileDocuments),
	ProblemSymlink:        "the symlink cannot be followed. Fix or remove it",
	ProblemHeader:         "the document's apiVersion/kind is missing or unknown. Fix the header",
	ProblemNotAllowed:     "the folder asks gwdev to run a command or fetch from the network, which it does only with your consent for that folder: what it would have produced was not loaded or checked. Read the folder's gwdev.yaml and kustomizations, then run gwdev trust DIR (or pass --trust)",
}

// Hint says what the problem means and how to fix it: by Root, Pruned,
// then Kind; a problem of no kind gets a general hint.
func (p Problem) Hint() string {
	switch {
	case p.Root:
		return rootHint
	case p.Pruned:
		return prunedHint
	}
	if h, ok := problemHints[p.Kind]; ok {
		return h
	}
	return otherHint
}
