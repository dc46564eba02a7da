#!/usr/bin/env bash
# Workspace status of `--config=release` (.bazelrc): the signing key is checked
# before anything builds, then tools/workspace_status.sh as for every build.
#
# A release signs (`--sign`), and a key that does not open would fail
# the push after hours of image builds. `python3 -m tools.registry.cli signing-key`
# opens $COSIGN_KEY as signing does (`cosign public-key`, $COSIGN_PASSWORD): a
# key that does not open stops the Bazel command here, in one line (exit 2);
# no $COSIGN_KEY is one line of note (the push may get `-- --key`), and the
# build goes on. Bounded: a KMS that never answers must not hold every build.
set -euo pipefail
cd "$(dirname "$0")/.."
rc=0
err=$(timeout 150 python3 -m tools.registry.cli signing-key 2>&1) || rc=$?
if [ "$rc" -ne 0 ]; then
  printf '%s\n' "${err:-registry signing-key: no answer in 150 s}" | tail -n 1 >&2
  exit 2
fi
printf '%s\n' "$err" >&2
exec tools/workspace_status.sh
