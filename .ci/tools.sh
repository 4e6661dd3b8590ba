#!/usr/bin/env bash
# Builds the external programs gwdev's integration tests drive, once, into a
# cache outside the repository (never a dependency of gwdev's go.mod):
#   kube-apiserver  from k8s.io/kubernetes (cmd/kube-apiserver) through a small
#                   wrapper module that replaces each k8s.io staging module with
#                   its release (about 8 minutes on 2 cores beside the tests, 170 MB);
#   helm            from helm.sh/helm/v4 (go install).
# Usage: .ci/tools.sh [kube-apiserver|helm|dir]...  (no argument: both).
# Prints the path of each tool (built when it is not in the cache yet), or
# the cache directory for `dir`; the Go tool's messages go to stderr.
# GWDEV_TOOLS overrides the directory.
set -euo pipefail
# Built with the installed go command when it is as new as the tool's
# go.mod asks (both say go 1.26.0), else with that toolchain, which the go
# command fetches from the module proxy (auto): never with the caller's
# GOTOOLCHAIN (gwdev's go1.27.3), and a clean CI machine with an older Go
# still builds them. Each go command runs outside gwdev's module.
export GOTOOLCHAIN=auto
KUBE_VERSION=v1.37.2
STAGING_VERSION=v0.37.2
HELM_VERSION=v4.3.1
dir=${GWDEV_TOOLS:-$(GOTOOLCHAIN=local go env GOCACHE)/../gwdev-tools}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

build_kube_apiserver() {
  local out="$dir/kube-apiserver-$KUBE_VERSION"
  [ -x "$out" ] && return 0
  local work
  work=$(mktemp -d)
  trap 'rm -rf "$work"; trap - RETURN' RETURN
  (
    cd "$work"
    go mod init gwdev-tools/kube-apiserver >/dev/null 2>&1
    # The staging modules k8s.io/kubernetes replaces with ./staging/src/…,
    # read from its own go.mod, each pinned to its release instead.
    local mod
    mod=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
    # The wrapper asks for the Go that k8s.io/kubernetes asks for, so that
    # an older installed go command switches to it (GOTOOLCHAIN=auto).
    go mod edit -go="$(sed -n 's/^go //p' "$mod")" -require="k8s.io/kubernetes@$KUBE_VERSION"
    for m in $(sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*#\1#p' "$mod"); do
      go mod edit -replace="$m=$m@$STAGING_VERSION"
    done
    printf 'package tools\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver"\n' > tools.go
    go mod tidy >/dev/null 2>&1 || go mod tidy
    nice go build -trimpath -ldflags=-s -o "$out.$$.tmp" k8s.io/kubernetes/cmd/kube-apiserver
    mv "$out.$$.tmp" "$out"
  )
}

build_helm() {
  local out="$dir/helm-$HELM_VERSION"
  [ -x "$out" ] && return 0
  local bin
  bin=$(mktemp -d)
  trap 'rm -rf "$bin"; trap - RETURN' RETURN
  (cd "$bin" && GOBIN="$bin" GOFLAGS=-mod=mod nice go install -trimpath -ldflags=-s "helm.sh/helm/v4/cmd/helm@$HELM_VERSION")
  mv "$bin/helm" "$out"
}

# built runs build function $1 for tool file $2 under a lock, so that
# concurrent callers (make test's background build and a test that needs
# the tool now) build it once: the later caller waits for the first. A
# build says what it builds, how long it takes, and that it is still
# going every minute (on stderr).
built() {
  local fn=$1 out=$2 what=$3 estimate=$4
  [ -x "$out" ] && return 0
  exec 9>"$out.lock"
  if command -v flock >/dev/null && ! flock -n 9; then
    echo "tools: waiting for another build of $what to finish ($out.lock)" >&2
    flock 9
  fi
  if [ ! -x "$out" ]; then
    echo "tools: building $what for the integration tests ($estimate on 2 cores beside the tests, once; cached in $dir)" >&2
    local start=$SECONDS ticker
    # The ticker sleeps in the background and waits for it, so that the
    # kill below ends it (and its sleep) at once: a subshell in a
    # foreground sleep would hold the build's end (and stderr) up to 60 s.
    ( exec 9>&-; s=""; trap '[ -n "$s" ] && kill "$s" 2>/dev/null; exit 0' TERM
      while :; do sleep 60 & s=$!; wait "$s"; echo "tools: still building $what ($(( (SECONDS - start) / 60 )) min so far)" >&2; done ) &
    ticker=$!
    local rc=0
    "$fn" >&2 || rc=$?
    kill "$ticker" 2>/dev/null; wait "$ticker" 2>/dev/null || true
    [ "$rc" = 0 ] || { exec 9>&-; return "$rc"; }
    echo "tools: built $what in $(( SECONDS - start )) s" >&2
  fi
  exec 9>&-
}

[ $# -eq 0 ] && set -- kube-apiserver helm
for t in "$@"; do
  case "$t" in
    kube-apiserver)
      built build_kube_apiserver "$dir/kube-apiserver-$KUBE_VERSION" "kube-apiserver $KUBE_VERSION" "about 8 minutes"
      echo "$dir/kube-apiserver-$KUBE_VERSION" ;;
    helm)
      built build_helm "$dir/helm-$HELM_VERSION" "helm $HELM_VERSION" "about 2 minutes"
      echo "$dir/helm-$HELM_VERSION" ;;
    dir) echo "$dir" ;;
    *) echo "tools.sh: unknown tool $t" >&2; exit 2 ;;
  esac
done
