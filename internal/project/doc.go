// Package project is gwdev's one project pipeline: sources (a folder,
// files, stdin, gwdev.yaml's render: commands, kustomizations) plus
// gwdev.yaml and the flags (--backend, --profile, --crds, --class,
// --trust) → a loader judging against one CRD bundle → engine.Translate
// with options built in one place → the result, with the loader's
// warnings and unused backend mappings among its findings.
//
//   - project.go: Open (the entry point), Project's Load, Translate,
//     TranslateTableFirst, AddLoadFindings, NewLoader.
//   - config.go, options.go: gwdev.yaml (parsing with file:line:column,
//     backends, profiles, crds:, render:), merged with the flags; Reread
//     and ConfigProblem for a gwdev.yaml that changes while `gwdev up`
//     runs; config_watch.go watches it.
//   - consent.go: whether the folder may run its commands and fetch remote
//     resources (internal/trust). crds.go: --crds and crds:. profiles.go:
//     profiles: and ycCertificates:. config_warn.go: the findings the
//     pipeline adds to the engine's.
//   - gc.go: the process's GC target while loading, translating, serving.
//
// It sits below the data plane: it imports watch, engine, the profiles and
// internal/trust, never emulator, so internal/app (which serves what it
// loads) and the test scaffolding (internal/testkit, which emulator's tests
// import) both build on it. internal/guard's TestOnePipeline fails on a
// loader made, engine.Options named or a translation run anywhere else.
package project
