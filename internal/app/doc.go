// Package app is gwdev's application: what every command and front end
// runs, so that none of them keeps its own copy in package main.
//
//   - The project pipeline is internal/project (project.Open), a package
//     below the data plane so that the test scaffolding builds on it too;
//     every command here loads and translates through it.
//   - The Session (session*.go): `gwdev up`'s load → translate → apply →
//     reload loop, publishing one typed State to subscribers (the
//     dashboard, the plain printer, the admin API through AdminStatus),
//     and its one-shot, Once (session_once.go), whose State check prints.
//     The MigrationRunner compares the Ingresses of each State beside it;
//     the TestRunner runs the folder's routing tests on each State.
//   - The routing tests (routetests*.go, gwdev test): the runner sends each
//     case of internal/routetest's format with a real client through a data
//     plane of its own on free ports, records (--record), updates
//     (--update) and emits cases from migrate (migrate_tests.go).
//   - The comparisons: migrate --compare (migrate_compare.go, into
//     report.MigrationComparison), diff's git
//     extraction and status comparison (diff*.go, into report.DiffReport),
//     check --cluster's controller-versus-spec comparison
//     (check_cluster.go, cluster_compare.go, into report.ClusterComparison).
//   - What one command computes for its output: explain
//     (ProbeFlags.Probe, ExplainProject; explain_text.go writes the
//     trace, which internal/report cannot import from emulator), graph
//     (WriteGraph), certs (Certs, MissingCertificates, LocalCA).
//
// It imports internal/project, watch, engine and emulator; cmd/gwdev
// parses flags, calls it and chooses the exit status, and tui reads its
// State.
package app
