#!/usr/bin/env bash
# bench_checks.sh - each benchmark's quick mode runs to its end (.ci/run).
#
#   .ci/bench_checks.sh [BENCH...]     (default: heavy push builders build_graph bake)
#
# Runs `python3 bench/BENCH.py --quick` (tiny sizes, one repetition) for each
# and checks that it exits 0 and that its last stdout line is its summary
# line: the benches cannot rot unseen. Numbers are not checked (they are the
# benches' to report, on a shared CI host they are noise). Needs what the
# benches need: Bazel and the engine, $REGISTRY and crane on PATH (`eval
# "$(python3 -m tools.engine env --registry)"`), the embedded staging
# registry. Each bench's stdout, stderr and JSON-lines results go to
# .ci/.cache/bench/. rehearsal.py (GBs of ROCm tree, no quick mode) is left
# to be run by hand. One check per bench, and one that the benches
# left the checkout as they found it (the files they edit restored, and
# builders.py's generated Dockerfiles already current: it rewrites stale
# ones); the last line is `N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/.."
out=.ci/.cache/bench
mkdir -p "$out"
# the summary line each bench prints last (bench/results.py: Results.summary)
declare -A summary=(
  [heavy]='^heavy chain \((plain|release) mode\): child [0-9.]+x plain, grand [0-9.]+x plain, host bytes [0-9.]+x unique, publish-change rebuilds [0-9]+$'
  [push]='^push: [0-9]+ images, no-op ours/crane [0-9.]+x, cold ours/crane [0-9.]+x, '
  [builders]='^builders: two engines [0-9.]+x in flight \(peak [0-9]+\), one engine [0-9.]+x; wall [0-9.]+ -> [0-9.]+ s is [0-9.]+x, digests equal$'
  [build_graph]='^build graph: analysis cold/warm wall [0-9.]+x; null build [0-9.]+s '
  [bake]='^family vs bake: null [0-9.]+x, one-file [0-9.]+x, base-change [0-9.]+x$'
)
benches=("$@")
[ ${#benches[@]} -gt 0 ] || benches=(heavy push builders build_graph bake)
# the checkout's uncommitted changes and untracked files, to compare after the runs
tree() { git diff HEAD; git ls-files --others --exclude-standard; }
before=$(tree | sha256sum)
passed=0 failed=0
for b in "${benches[@]}"; do
  t=$(date +%s)
  python3 "bench/$b.py" --quick --results-dir "$out" >"$out/$b.out" 2>"$out/$b.err"
  rc=$?
  last=$(tail -n 1 "$out/$b.out")
  if [ "$rc" -eq 0 ] && [[ $last =~ ${summary[$b]:?no summary pattern for bench $b} ]]; then
    passed=$((passed + 1))
    echo "ok   bench/$b.py --quick ($(($(date +%s) - t)) s): $last"
  else
    failed=$((failed + 1))
    echo "FAIL bench/$b.py --quick ($(($(date +%s) - t)) s, exit $rc); last lines of $out/$b.err:"
    tail -n 20 "$out/$b.err" | sed 's/^/  /'
    echo "  last stdout line: $last"
  fi
done
if [ "$(tree | sha256sum)" = "$before" ]; then
  passed=$((passed + 1))
  echo "ok   the benches left the checkout as they found it"
else
  failed=$((failed + 1))
  echo "FAIL the benches changed the checkout (a stale generated file? an edit not undone?):"
  git status --short | sed 's/^/  /'
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
