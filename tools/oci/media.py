"""OCI and Docker media types of manifests, indexes and artifacts."""

from __future__ import annotations

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_MANIFEST_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
EMPTY_CONFIG = "application/vnd.oci.empty.v1+json"

# What a manifest GET or HEAD accepts (its Accept header).
MANIFEST_TYPES = ", ".join([OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_MANIFEST_LIST])
# Manifests that list other manifests (one per platform).
INDEX_TYPES = (OCI_INDEX, DOCKER_MANIFEST_LIST)
