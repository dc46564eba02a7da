#!/usr/bin/env bash
# The MAGMA build of PyTorch's CI (rehearsal stand-in): the pin in the form
# docker/scripts/build-magma.sh reads it, the commit the stand-in MAGMA's.
set -eou pipefail

MAGMA_VERSION=@magma@

pushd "${PACKAGE_DIR:-.}"
git clone https://github.com/k-artem/magma.git
pushd magma
git checkout ${MAGMA_VERSION}
popd
popd
