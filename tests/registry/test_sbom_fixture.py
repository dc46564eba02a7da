"""The SBOMs of real fixture images (built by Bazel into staging), read from their layers.

The stand-in upstream image carries the dpkg record of busybox-static (the
package its busybox comes from); the fixture runtime image installs the
fixture torch wheel into its Python. No registry push: the layers are read
from staging by digest, as `registry push --attest` reads them.
"""

from __future__ import annotations

from pathlib import Path

from tools.registry import sbom
from tools.staging.clients import Clients
from tools.staging.descriptor import load
from tools.tagconf import catalog
from tools.tagconf.tags import resolve_values

# The fixture family is the real catalogue's: its pytorch Dockerfile
# (tests/e2e/docker/Dockerfile.pytorch) versions the torch wheel
# ${PYTORCH_VERSION}+rocm${ROCM_VERSION with . for -}.${PYTORCH_ROCM_ARCH}
VALUES = resolve_values(catalog.load("images/catalog.toml"))
TORCH = f"{VALUES['PYTORCH_VERSION']}+rocm{VALUES['ROCM_VERSION'].replace('-', '.')}.gfx950"


def bom_of(name: str) -> dict:
    d = load(Path(f"tests/e2e/{name}.json"))
    clients = Clients()
    try:
        s = clients.staging(d)
        layers = [(b.digest, b.media_type) for b in d.layers]
        files, read = sbom.image_files(
            layers, lambda digest: s.blob_stream(d.staging_name, digest), None
        )
    finally:
        clients.close()
    assert read == len(layers)
    return sbom.cyclonedx(files, d.repository, d.digest, {"target": d.target})


def purls(bom: dict) -> set[str]:
    return {c["purl"] for c in bom["components"]}


def test_the_stand_in_lists_busybox_static_from_dpkg():
    bom = bom_of("upstream")
    debs = [p for p in purls(bom) if p.startswith("pkg:deb/")]
    assert len(debs) == 1, debs
    assert debs[0].startswith("pkg:deb/debian/busybox-static@1%3A"), debs
    assert debs[0].endswith("?arch=amd64")


def test_the_fixture_runtime_lists_the_torch_wheel():
    bom = bom_of("pytorch-run.gfx950")
    assert f"pkg:pypi/torch@{TORCH}" in purls(bom), purls(bom)
    torch = next(c for c in bom["components"] if c["name"] == "torch")
    locations = [p["value"] for p in torch["properties"] if p["name"].endswith(":location")]
    assert locations[0].endswith(f"torch-{TORCH}.dist-info")
