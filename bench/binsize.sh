#!/usr/bin/env bash
# What gwdev's binary weighs, package by package: builds it as `make build`
# does (static, -trimpath, -s -w) and prints the file's size, then builds it
# again keeping the symbol table (no -s) and sums `go tool nm -size` by
# package (code, read-only data and data; not bss, which takes no room in
# the file): the top packages, the top modules (a standard library
# package counts as "std"; a module is named by its path's first two or
# three elements) and the total. The table, pclntab and type data
# the linker adds per function count in no package, so the sum is less
# than the file.
#
# bench/binsize.sh REF also builds the git revision REF and prints both
# sizes and, for the modules, REF's bytes, this tree's and the difference.
# TOP=n sets the rows printed (30).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
base=${1:-}
top=${TOP:-30}

# build DIR OUT: the stripped binary OUT and OUT.syms with symbols.
build() {
  (cd "$1" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$2" ./cmd/gwdev &&
    CGO_ENABLED=0 go build -trimpath -ldflags "-w" -o "$2.syms" ./cmd/gwdev)
}

# packages BIN: "bytes package" lines, largest first. A symbol's package
# is its name up to the first dot after the last slash, once type:,
# go:itab. and generic arguments ([...]) and receivers ((*T)) are set aside.
packages() {
  go tool nm -size "$1" | awk '
    $3 == "B" || $3 == "b" || $3 == "U" || NF < 4 { next }
    {
      name = $4; for (i = 5; i <= NF; i++) name = name " " $i
      if (name ~ /^go:func\./) { size["(go:func.*)"] += $2; next }
      sub(/^type:\*?/, "", name); sub(/^go:itab\.\*?/, "", name); sub(/^go:/, "", name)
      b = index(name, "["); if (b > 0) name = substr(name, 1, b - 1)
      p = index(name, "("); if (p > 0) name = substr(name, 1, p - 1)
      last = 0; s = name
      while ((k = index(s, "/")) > 0) { last += k; s = substr(s, k + 1) }
      d = index(substr(name, last + 1), ".")
      pkg = d > 0 ? substr(name, 1, last + d - 1) : name
      if (pkg == "") pkg = "(unnamed)"
      size[pkg] += $2
    }
    END { for (p in size) print size[p], p }' | sort -rn
}

# modules PKGS: "bytes module" lines from packages' output; a package
# whose first element has no dot is the standard library's.
modules() {
  awk '{
    n = split($2, e, "/")
    if ($2 ~ /^\(/) m = $2
    else if (e[1] !~ /\./) m = "std"
    else if (e[1] ~ /^(github\.com|golang\.org|sigs\.k8s\.io|go\.yaml\.in)$/ && n > 2) m = e[1] "/" e[2] "/" e[3]
    else m = e[1] "/" e[2]
    size[m] += $1
  } END { for (m in size) print size[m], m }' "$1" | sort -rn
}

mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }

build . "$tmp/gwdev"
packages "$tmp/gwdev.syms" > "$tmp/pkgs"
modules "$tmp/pkgs" > "$tmp/mods"
echo "gwdev (this tree, make build): $(mb "$(stat -c %s "$tmp/gwdev")"); symbols in packages: $(mb "$(awk '{s += $1} END {print s}' "$tmp/pkgs")")"
echo
echo "top $top packages:"
head -"$top" "$tmp/pkgs" | awk '{ printf "  %8.1f KB  %s\n", $1 / 1e3, $2 }'
echo
echo "top $top modules (std: the standard library):"
head -"$top" "$tmp/mods" | awk '{ printf "  %8.1f KB  %s\n", $1 / 1e3, $2 }'

if [ -n "$base" ]; then
  mkdir "$tmp/base"
  git archive "$base" | tar -x -C "$tmp/base"
  build "$tmp/base" "$tmp/gwdev-base"
  packages "$tmp/gwdev-base.syms" > "$tmp/pkgs-base"
  modules "$tmp/pkgs-base" > "$tmp/mods-base"
  echo
  echo "$base (make build's flags): $(mb "$(stat -c %s "$tmp/gwdev-base")"); symbols in packages: $(mb "$(awk '{s += $1} END {print s}' "$tmp/pkgs-base")")"
  echo "modules that changed most ($base → this tree):"
  awk 'NR == FNR { b[$2] = $1; next } { t[$2] = $1 }
    END {
      for (m in b) if (!(m in t)) t[m] = 0
      for (m in t) { d = t[m] - b[m]; if (d != 0) printf "%d %d %d %s\n", (d < 0 ? -d : d), b[m], t[m], m }
    }' "$tmp/mods-base" "$tmp/mods" | sort -rn | head -"$top" |
    awk '{ printf "  %8.1f KB → %8.1f KB  %+9.1f KB  %s\n", $2 / 1e3, $3 / 1e3, ($3 - $2) / 1e3, $4 }'
fi
