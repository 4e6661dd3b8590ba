// Package conformance runs the official Gateway API conformance suite
// (sigs.k8s.io/gateway-api/conformance) against gwdev, in process: a fake
// Kubernetes API (controller-runtime's fake client) holds the objects the
// suite creates, a small controller loop moves them through gwdev's real
// loader, engine and emulator and writes the status back, and the suite's
// requests go to the addresses and ports the emulator really binds.
//
// It is its own module so that gwdev's binary and go.mod do not carry the
// suite's dependencies. Run it with `make conformance`; see README.md.
//
// Files: harness_test.go (the run and its flags), apiserver_test.go (the
// fake API: generation, uid, creationTimestamp, CRDs), controller_test.go
// (objects → loader → engine → emulator → status), kubelet_test.go (Pods
// for Deployments, pod logs), containers_test.go (the Pods' echo-basic
// processes behind their Pod IPs), endpoints_test.go (EndpointSlices),
// gwdevtests_test.go (gwdev's own tests), features_test.go (what gwdev claims and why
// tests are skipped), report_test.go (report.yaml and the regression check).
package conformance
