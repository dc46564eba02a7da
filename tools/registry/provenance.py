"""SLSA provenance of a published image: an in-toto statement from Bazel's files.

Everything comes from what the build left: the descriptor (digest,
Dockerfile, stage, parents by digest, builder, content key) and tagconf's
spec (target, arch, build args, upstream image, source, the commit). The
commit is the spec's VCS_REF (`--config=release` stamps it), which is not an
image input: one digest published from two commits gets two statements, one
per commit, and the same commit always gives the same bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tools.staging.descriptor import Descriptor

STATEMENT = "https://in-toto.io/Statement/v1"
SLSA = "https://slsa.dev/provenance/v1"
IN_TOTO = "application/vnd.in-toto+json"
BUILD_TYPE = "https://github.com/rocm-pytorch/images/tools/imagebuild@v1"


def statement(d: Descriptor, spec: dict) -> dict:
    """The in-toto statement (SLSA provenance v1 predicate) for ``d``.

    No registry in it: the statement is about the digest, wherever it is
    published (a mirror, a proxy's address), so re-publishing it elsewhere
    attaches the same bytes.
    """
    algorithm, _, hex_ = d.digest.partition(":")
    source = (spec.get("labels") or {}).get("org.opencontainers.image.source", "")
    commit = spec.get("vcs_ref") or ""
    dependencies = [
        {"name": parent, "digest": {digest.partition(":")[0]: digest.partition(":")[2]}}
        for parent, digest in sorted(d.parents.items())
    ]
    if source:
        dep = {"name": "source", "uri": f"git+{source}"}
        if commit:
            dep["uri"] += f"@{commit}"
            dep["annotations"] = {"vcs_ref": commit}
        dependencies.insert(0, dep)
    if spec.get("upstream") and not d.parents:  # built FROM the upstream image (or scratch)
        dependencies.append({"name": "upstream", "uri": f"docker-image://{spec['upstream']}"})
    return {
        "_type": STATEMENT,
        "subject": [{"name": d.repository, "digest": {algorithm: hex_}}],
        "predicateType": SLSA,
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {
                    "target": d.target,
                    "arch": d.arch,
                    "dockerfile": d.dockerfile or spec.get("dockerfile", ""),
                    "stage": d.stage or spec.get("stage", ""),
                    "buildArgs": spec.get("build_args") or {},
                    "commit": commit or None,
                },
                "internalParameters": {
                    "contentKey": d.content_key,
                    "sourceDateEpoch": 0,
                },
                "resolvedDependencies": dependencies,
            },
            "runDetails": {
                "builder": {"id": f"buildx://{d.builder['name']}"},
                "metadata": {"invocationId": d.content_key or d.digest},
            },
        },
    }
