#!/usr/bin/env bash
# Workspace status (see .bazelrc): Bazel runs this at the workspace root before
# every build, test and run, and under `--config=release` (--stamp) copies each
# `KEY value` line into its stamp files; without --stamp no action reads them.
#
# It also starts the embedded staging registry (docs/staging.md) unless it
# is running: this command runs outside every action, so the registry
# outlives the build, where one an image build starts is killed with that
# action (and under a parallel build that found it running). Quiet; a registry
# that cannot start does not fail the build (an image build still starts one
# when this could not, and says why not); ROCM_PYTORCH_STAGING_AUTOSTART=0
# turns it off, and a value of it that is not a switch, or any other error of
# the start (a state dir it cannot write), stops the build in one line.
# STABLE_ keys go to stable-status.txt, so a new commit re-runs the actions
# that read them (the tag rules: the immutable `<versioned>-g<sha>` tag).
#
#   STABLE_VCS_REF    the commit's short sha (7+ lowercase hex digits)
#   STABLE_GIT_DIRTY  true when tracked files differ from the commit, else false
#   STABLE_GIT_CHANGED the first five of those files (only when dirty)
#
# Outside a git checkout (a source tarball) it prints nothing and exits 0, so
# stamped builds still work and simply carry no commit tag.
set -euo pipefail

# Start the embedded staging registry (outside every action, so it outlives
# the build). Where the Docker actions' engine, staging and mirrors are is not
# workspace status: a repository rule hands them over (tools/client_env.py).
if command -v python3 >/dev/null 2>&1; then
  # bounded: a registry that never gets ready must not hold up every build
  # (tools.staging gives up after 20 s itself). Exit status 2 is a setting it
  # cannot read (ROCM_PYTORCH_STAGING_AUTOSTART=maybe) or a start that failed
  # otherwise than a registry that cannot start (tools/client_env.py): the
  # build stops on its one line, Bazel prints it. A registry that cannot start
  # exits 0, quietly.
  rc=0
  err=$(timeout 30 python3 -m tools.client_env start-staging 2>&1 >/dev/null) || rc=$?
  if [ "$rc" -eq 2 ]; then
    printf '%s\n' "$err" >&2
    exit 2
  fi
fi

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  exit 0
fi
if ! ref=$(git rev-parse --short=7 --verify -q HEAD 2>/dev/null); then
  exit 0 # a repository without commits yet
fi
ref=$(printf '%s' "$ref" | tr 'A-F' 'a-f')
case $ref in
  *[!0-9a-f]* | "") exit 0 ;; # never hand the tag rules a malformed ref
esac
echo "STABLE_VCS_REF $ref"

# Untracked files do not count: they are not part of the commit's build.
# GIT_OPTIONAL_LOCKS=0: never take index.lock (a concurrent git command in the
# same checkout must not fail because a build is running).
changed=$(GIT_OPTIONAL_LOCKS=0 git status --porcelain --untracked-files=no 2>/dev/null)
if [ -z "$changed" ]; then
  echo "STABLE_GIT_DIRTY false"
else
  echo "STABLE_GIT_DIRTY true"
  # which files (the first five), for the release's refusal to name them
  printf '%s\n' "$changed" | awk 'NR <= 5 { sub(/^ *[^ ]+ +/, ""); f = f (f ? ", " : "") $0 } END { print "STABLE_GIT_CHANGED " f (NR > 5 ? ", ..." : "") }'
fi
