#!/usr/bin/env bash
# fresh_clone_check.sh - the README's setup, in a fresh clone with no ../shared.
#
#   .ci/fresh_clone_check.sh [--worktree] [--fresh-machine] [BAZEL_TEST_FLAG...]
#
# Clones this checkout's HEAD (git clone) into a new temporary directory that
# holds nothing else (no ../shared, no user.bazelrc, no bazel-* links, no
# untracked files) and runs there exactly the README's two setup lines,
#     tools/bootstrap.sh
#     bazel test //tests/...
# then the README's "Try it here" block as written (.ci/try_it.py: its own
# engine and loopback registry, the clone's default output base, which is
# removed at the end), its checks counted with the tests,
# in an environment without the engine's and registry's variables
# (DOCKER_HOST, DOCKER_CONFIG, ROCM_PYTORCH_ENGINE_DIR, REGISTRY, ...), as a
# new user has it: the builds and tests must find or start an engine
# themselves. Staging gets a state directory and port of its own (in the
# temporary directory), so the embedded registry the builds use is one that
# `bazel test` itself had to start, not CI's. BAZEL_TEST_FLAGs are added to the test command (.ci/run passes
# its cache flag, so the run takes cache hits). --worktree copies uncommitted
# changes (tracked and untracked, not ignored) over the clone, to check work
# before it is committed.
#
# --fresh-machine goes further, as a new machine has it: tools/bootstrap.sh
# builds a new sid tree (Bazel, its output root, the container tools) in the
# temporary directory and puts its `bazel` first on PATH, and the private
# engine gets a new state directory there too (no engine answers, so the
# builds and tests start their own); only the kernel, apt's mirror and PyPI
# are the host's. It downloads about 1.9 GB and takes minutes more; not part
# of .ci/run. It prints the cold time, then runs `bazel test` again (warm).
#
# The clone's Bazel output base lives in the temporary directory; the server
# is shut down and the directory removed at the end. A private engine the run
# started (none answered before) is stopped again. The last line is
# `fresh clone: N passed, N failed`, counted like .ci/summary.py (pytest cases
# from each test target's JUnit XML; a target without results is a failure).
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
worktree=0 fresh=0 flags=() tmp='' clone='' engine_was_up='' clean=(env) try_ran=''
for a in "$@"; do
  case $a in
    --worktree) worktree=1 ;;
    --fresh-machine) fresh=1 ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) flags+=("$a") ;;
  esac
done
say() { echo "fresh clone: $*" >&2; }
fail() {
  say "$*"
  cleanup
  echo "fresh clone: 0 passed, 1 failed"
  exit 1
}

# /var/tmp, not /tmp: Bazel's sandboxes put an empty /tmp over the real one
tmp=$(mktemp -d "${FRESH_CLONE_TMPDIR:-/var/tmp}/rocm-pytorch-fresh-clone.XXXXXX") ||
  fail "cannot make a temporary directory"
clone=$tmp/rocm-pytorch-images
ob=$tmp/output-base
# the variables .ci/run (or a developer's shell) set for an engine or registry
clean=(env -u DOCKER_HOST -u DOCKER_CONFIG -u DOCKER_CONTEXT -u BUILDX_NO_DEFAULT_ATTESTATIONS
  -u ROCM_PYTORCH_ENGINE_DIR -u REGISTRY -u ROCM_CI_SERVICES_DIR -u ROCM_CI_REGISTRY_LOG
  -u CONTAINERS_REGISTRIES_CONF -u ROCM_PYTORCH_STAGING_AUTOSTART -u ROCM_PYTORCH_ENGINE_AUTOSTART
  -u ROCM_PYTORCH_SID_PREFIX -u ROCM_PYTORCH_BIN_DIR
  "ROCM_PYTORCH_STAGING_DIR=$tmp/staging"
  "ROCM_PYTORCH_STAGING_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')")
path=$(printf '%s' "$PATH" | tr ':' '\n' |
  grep -vxF -e "${ROCM_PYTORCH_ENGINE_DIR:-/nonexistent}/bin" | grep -v '/rocm-pytorch-images/.*engine/bin$' |
  paste -sd:)
if [ "$fresh" = 1 ]; then
  clean+=("PATH=$tmp/bin:$path" "ROCM_PYTORCH_ENGINE_DIR=$tmp/engine")
  bootstrap=(bash tools/bootstrap.sh "--prefix=$tmp/sid" "--bin-dir=$tmp/bin")
else
  clean+=("PATH=$path")
  bootstrap=(bash tools/bootstrap.sh)
fi

cleanup() {
  trap - EXIT
  if [ -d "$clone" ]; then
    (cd "$clone" && "${clean[@]}" bazel --output_base="$ob" shutdown) >/dev/null 2>&1
    if [ -n "$try_ran" ]; then # the try-it block's default output base: not under $tmp
      (cd "$clone" && "${clean[@]}" bazel clean --expunge) >/dev/null 2>&1
    fi
    (cd "$clone" && "${clean[@]}" python3 -m tools.staging stop) >&2
    if [ "$engine_was_up" = no ]; then
      say "stopping the private engine this run started"
      (cd "$clone" && "${clean[@]}" python3 -m tools.engine stop) >&2
    fi
  fi
  if [ -n "$tmp" ]; then rm -rf --one-file-system "$tmp"; fi
}
trap cleanup EXIT

say "cloning $(git -C "$src" rev-parse --short HEAD) into $clone"
git clone -q --no-hardlinks "$src" "$clone" || fail "git clone failed"
if [ "$worktree" = 1 ]; then
  (cd "$src" && git ls-files -z -m -o --exclude-standard | xargs -0 -r cp --parents -t "$clone") ||
    fail "copying the uncommitted changes failed"
  (cd "$src" && git ls-files -z -d) | (cd "$clone" && xargs -0 -r rm -f --)
  say "copied the uncommitted changes (--worktree)"
fi
[ ! -e "$tmp/shared" ] || fail "$tmp/shared exists"
cd "$clone" || fail "cannot enter $clone"
if "${clean[@]}" python3 -m tools.engine status >/dev/null 2>&1; then engine_was_up=yes; else engine_was_up=no; fi

t0=$(date +%s)
say "${bootstrap[*]}"
"${clean[@]}" "${bootstrap[@]}" || fail "tools/bootstrap.sh failed"
say "bootstrap took $(($(date +%s) - t0))s"
if [ "$fresh" = 1 ]; then # another prefix keeps its cosign beside its tree
  [ -x "$tmp/sid.state/bin/cosign" ] || fail "bootstrap --prefix=$tmp/sid put no cosign in $tmp/sid.state/bin"
fi
say "bazel test //tests/... ${flags[*]}"
"${clean[@]}" bazel --output_base="$ob" test //tests/... "${flags[@]}"
test_rc=$?
labels=$("${clean[@]}" bazel --output_base="$ob" query 'tests(//tests/...)' 2>/dev/null | sort)
testlogs=$("${clean[@]}" bazel --output_base="$ob" info bazel-testlogs 2>/dev/null)
[ -n "$labels" ] && [ -n "$testlogs" ] || fail "bazel query/info failed in the clone"
# shellcheck disable=SC2086
out=$(python3 .ci/summary.py "$testlogs" $labels)
line=$(printf '%s\n' "$out" | tail -n 1)
say "$(echo "$labels" | wc -w) test targets in $(($(date +%s) - t0))s (bazel test exit $test_rc)"
if [ "$fresh" = 1 ]; then
  t1=$(date +%s)
  "${clean[@]}" bazel --output_base="$ob" test //tests/... "${flags[@]}" >/dev/null 2>&1
  warm_rc=$?
  say "warm: bazel test //tests/... again in $(($(date +%s) - t1))s (exit $warm_rc)"
fi
if [ "$test_rc" -ne 0 ] && [[ $line =~ \ 0\ failed$ ]]; then
  say "bazel test failed although every test result passed (a build error?)"
  line="${line% 0 failed} 1 failed"
fi
# The README's "Try it here" block, as a newcomer copies it: its own engine and
# loopback registry (eval), the default output base of the clone (removed below)
say "the README's Try it here block (.ci/try_it.py)"
try_ran=1
t2=$(date +%s)
try_out=$("${clean[@]}" python3 .ci/try_it.py 2>&1)
printf '%s\n' "$try_out" | tail -n 60 >&2
say "try it took $(($(date +%s) - t2))s"
summary='^([0-9]+) passed, ([0-9]+) failed$'
try_last=$(printf '%s\n' "$try_out" | tail -n 1)
if [[ $line =~ $summary ]]; then
  tp=${BASH_REMATCH[1]} tf=${BASH_REMATCH[2]}
  if [[ ${try_last#try it: } =~ $summary ]]; then
    line="$((tp + BASH_REMATCH[1])) passed, $((tf + BASH_REMATCH[2])) failed"
  else # it ended without its summary line: one failure
    printf '%s\n' "$try_out" | tail -n 30 >&2
    line="$tp passed, $((tf + 1)) failed"
  fi
fi
# the registry `bazel test` started outside its actions (workspace status command)
say "$("${clean[@]}" python3 -m tools.staging status 2>&1 | head -3 | paste -sd' ')"
cleanup # before the summary, so that it is the last line
echo "fresh clone: $line"
[[ $line =~ \ 0\ failed$ ]]
