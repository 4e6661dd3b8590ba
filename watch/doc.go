// Package watch loads a directory tree of Kubernetes manifests (YAML or JSON,
// any file layout, multi-document files, List kinds) into an engine.Snapshot
// of typed Gateway API and core objects, validating each object the way the
// Kubernetes apiserver would on `kubectl apply`: strict decoding, CRD
// defaulting, OpenAPI schema validation and CEL rules from the real Gateway
// API CustomResourceDefinitions (embedded under crds/), plus a few
// hand-written rules for core kinds.
//
// Every problem carries the file, line and column of the offending field.
// A rejected object is left out of the Snapshot; the other objects of the
// same file are kept. See README.md for the rules and their origin.
package watch

//go:generate go run ./internal/crdgen -out crds
