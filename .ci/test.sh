#!/usr/bin/env bash
# make test's race tests, saying what they do: the programs the integration
# tests drive (kube-apiserver, helm: .ci/tools.sh) build in the background
# while every package but cmd/gwdev is tested; cmd/gwdev's tests, which
# need them, run once the build is done. gotestsum (a tool in go.mod) prints
# each package as it passes, every failure whole, and at the end the list of
# skipped tests with the reason each gave.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
export GO
flags="-race -count=1 -timeout 25m"
export flags
# The build announces itself and its progress on stderr (.ci/tools.sh).
./.ci/tools.sh >/dev/null &
others=$($GO list ./... | grep -v '/cmd/gwdev$' | tr '\n' ' ')
export others
# The tools' progress goes to this script's stderr through fd 3, past
# gotestsum, which would list each line among the tests' "errors".
exec 3>&2
exec $GO tool gotestsum --format pkgname-and-test-fails --format-hide-empty-pkg --raw-command -- bash -c '
  $GO test -json $flags $others; rc=$?
  # Waits for the background build (tools.sh locks each tool), or builds.
  if ! ./.ci/tools.sh >/dev/null 2>&3; then
    echo "tools: could not build kube-apiserver/helm: the tests that need them will skip, saying so" >&3
  fi
  $GO test -json $flags ./cmd/gwdev || rc=1
  exit $rc'
