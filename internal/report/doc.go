// Package report renders what gwdev found, for people and for machines:
// every object with its status and the findings as YAML (one renderer, the
// bytes of sigs.k8s.io/yaml.Marshal: the engine's golden files, `gwdev
// check -o yaml` and the dashboard's YAML view), JSON, SARIF, GitHub
// Actions annotations and check's summary, diff's report in each format
// (diff.go: DiffReport, WriteDiff), check --cluster's comparison
// (cluster.go: ClusterComparison, WriteClusterComparison), and condition
// badges from the engine's polarity rule. It reads engine results and the loader's
// problems (watch) and never imports tui or cmd, so CI output does not
// depend on the dashboard.
package report
