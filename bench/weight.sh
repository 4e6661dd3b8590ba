#!/usr/bin/env bash
# gwdev's weight against issue 42's targets: the size of the binary `make
# build` writes (≤ 75 MB), the peak RSS of `gwdev version` (≤ 35 MB,
# median of 5) and of `gwdev check -o yaml` on 10,000 generated HTTPRoutes
# (bench/genroutes: ≤ 110 MB peak RSS and ≤ 1.2 s wall, median of 3), with
# its user+sys CPU time (median) beside the wall time, which a busy machine
# stretches.
#
# bench/weight.sh REF also builds the git revision REF with its own `make
# build` and runs the two builds interleaved, one after the other in each
# round, so that a shared machine's load falls on both alike; it prints
# both, REF first. RUNS=n sets the rounds of check (3).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
need bench/weight.sh time /usr/bin/time
base=${1:-}
runs=${RUNS:-3}

make -s build BIN="$tmp/gwdev" >/dev/null
builds=(gwdev)
if [ -n "$base" ]; then
  mkdir "$tmp/base"
  git archive "$base" | tar -x -C "$tmp/base"
  make -s -C "$tmp/base" build BIN="$tmp/gwdev-base" >/dev/null
  builds=(gwdev-base gwdev)
fi
# Measure copies: a binary as the linker wrote it may sit in the page cache
# in 2 MB folios, which the kernel then maps whole (FilePmdMapped in
# /proc/PID/smaps): the same bytes read 3-4 MB more RSS, for version and
# check alike, for one build and not the other. A copy written by cp does
# not (issue 42, part 3).
for b in "${builds[@]}"; do
  cp "$tmp/$b" "$tmp/$b.copy" && mv "$tmp/$b.copy" "$tmp/$b"
done
go run ./bench/genroutes -n 10000 -o "$tmp/r10000"

# same_output: the two builds' check -o yaml, with lastTransitionTime (the
# clock) blanked, differ nowhere; stops with the first difference.
same_output() {
  local dir name b rc
  for dir in "$tmp/r10000" samples/*/; do
    name=$(basename "$dir")
    for b in gwdev-base gwdev; do
      rc=0
      "$tmp/$b" check -o yaml "$dir" >"$tmp/out-$b" 2>"$tmp/err-$b" || rc=$?
      sed -i -E 's/(lastTransitionTime: ).*/\1T/' "$tmp/out-$b"
      echo "exit $rc" >>"$tmp/out-$b"
    done
    if ! cmp -s "$tmp/out-gwdev-base" "$tmp/out-gwdev"; then
      echo "check -o yaml $name: this tree's output differs from $base's:"
      diff "$tmp/out-gwdev-base" "$tmp/out-gwdev" | head -20
      exit 1
    fi
  done
  echo "check -o yaml: this tree and $base print the same for the 10,000 routes and every sample"
}
if [ -n "$base" ] && [ "${SAME:-1}" != 0 ]; then same_output; fi

# median FILE COLUMN: the median of a column of numbers.
median() { cut -d' ' -f"$2" "$1" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

for b in "${builds[@]}"; do : > "$tmp/version-$b"; : > "$tmp/check-$b"; done
for i in 1 2 3 4 5; do
  for b in "${builds[@]}"; do
    /usr/bin/time -o "$tmp/time" -f '%M' "$tmp/$b" version >/dev/null
    cat "$tmp/time" >> "$tmp/version-$b"
  done
done
for i in $(seq "$runs"); do
  for b in "${builds[@]}"; do
    # check exits 1 when it finds problems; the timing is what counts here.
    /usr/bin/time -o "$tmp/time" -f '%e %U %S %M' "$tmp/$b" check -o yaml "$tmp/r10000" >/dev/null 2>&1 || true
    awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$tmp/time" >> "$tmp/check-$b"
  done
done

for b in "${builds[@]}"; do
  label="this tree"
  [ "$b" = gwdev-base ] && label=$base
  size=$(stat -c %s "$tmp/$b")
  printf '%-12s binary %6.1f MB (≤ 75)   version peak RSS %5.1f MB (≤ 35)   check -o yaml 10,000 routes: peak RSS %5.1f MB (≤ 110)  wall %.2f s (≤ 1.2)  cpu %.2f s\n' \
    "$label" "$(awk -v s="$size" 'BEGIN { print s / 1e6 }')" \
    "$(awk -v k="$(median "$tmp/version-$b" 1)" 'BEGIN { print k / 1024 }')" \
    "$(awk -v k="$(median "$tmp/check-$b" 3)" 'BEGIN { print k / 1024 }')" \
    "$(median "$tmp/check-$b" 1)" "$(median "$tmp/check-$b" 2)"
done
