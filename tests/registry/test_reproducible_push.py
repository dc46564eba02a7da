"""An immutable tag only for a reproducible image: the push refuses it, before any request,
for an image whose descriptor says it was built without `--reproducible`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.oci.digest import digest_of
from tools.oci.errors import RegistryError
from tools.oci.media import OCI_MANIFEST
from tools.registry.plan import PlannedImage
from tools.registry.push import Pusher, PushOptions, unreproducible
from tools.staging import Staging
from tools.staging import descriptor as desc

LAYER = "sha256:" + "1" * 64
CONFIG = "sha256:" + "2" * 64
IMMUTABLE = "4.5.6-gabc1234"


def built(tmp: Path, target: str, reproducible: bool | None) -> Path:
    """A descriptor file of ``target``; ``None``: one from before the modes (no field)."""
    manifest = json.dumps(
        {"config": {"digest": CONFIG, "size": 2}, "layers": [{"digest": LAYER, "size": 3}]}
    ).encode()
    d = desc.Descriptor(
        target=target,
        arch="gfx950",
        repository=target,
        digest=digest_of(manifest),
        media_type=OCI_MANIFEST,
        manifest=manifest,
        config={},
        reproducible=bool(reproducible),
        **Staging("127.0.0.1:9/staging", False).placement(f"staging/{target}", "c-00"),
    )
    path = tmp / f"{target}.json"
    data = d.to_json()
    if reproducible is None:
        del data["reproducible"]
    path.write_text(json.dumps(data))
    return path


def image(tmp: Path, target: str, reproducible: bool | None, immutable: bool) -> PlannedImage:
    tags = ("4.5.6", "latest", *((IMMUTABLE,) if immutable else ()))
    return PlannedImage(
        target=target,
        arch="gfx950",
        # no registry answers here: a request would fail with another error
        registry="127.0.0.1:9/ns",
        repository=target,
        tags=tags,
        immutable=IMMUTABLE if immutable else None,
        descriptor=built(tmp, target, reproducible),
        parents=(),
    )


def descriptors(images: list[PlannedImage]) -> dict:
    return {i.key: i.load_descriptor() for i in images}


def test_the_descriptor_records_the_mode_and_an_old_one_reads_as_reproducible(tmp_path):
    assert desc.load(built(tmp_path, "a", False)).reproducible is False
    assert desc.load(built(tmp_path, "b", True)).reproducible is True
    data = json.loads(built(tmp_path, "c", None).read_text())
    assert "reproducible" not in data  # written before the modes: all were reproducible
    assert desc.from_json(data).reproducible is True
    with pytest.raises(desc.DescriptorError, match="reproducible is 'yes', want true or false"):
        desc.from_json({**data, "reproducible": "yes"})


def test_an_immutable_tag_of_a_non_reproducible_image_is_refused_in_one_line(tmp_path):
    images = [
        image(tmp_path, "rocm-runtime", True, immutable=True),
        image(tmp_path, "pytorch", False, immutable=True),
    ]
    refusal = unreproducible(images, descriptors(images))
    assert "\n" not in refusal
    assert refusal == (
        "immutable tags need reproducible images (a clean rebuild must give the same digest);"
        " nothing was pushed: pytorch (gfx950) (127.0.0.1:9/ns/pytorch:4.5.6-gabc1234) built"
        " without --reproducible. Build with --config=release (or --reproducible)"
    )


def test_floating_and_versioned_tags_of_a_non_reproducible_image_are_fine(tmp_path):
    images = [
        image(tmp_path, "pytorch", False, immutable=False),
        image(tmp_path, "rocm-runtime", None, immutable=True),  # an old descriptor
    ]
    assert unreproducible(images, descriptors(images)) == ""


def test_the_push_refuses_before_any_request(tmp_path):
    images = [
        image(tmp_path, "rocm-runtime", True, immutable=True),
        image(tmp_path, "pytorch", False, immutable=True),
    ]
    pusher = Pusher(PushOptions(retries=0), log=lambda _line: None)
    try:
        with pytest.raises(RegistryError, match=r"^immutable tags need reproducible images"):
            pusher.push(images)
        assert pusher.total_requests() == 0  # nothing asked, nothing half-pushed
    finally:
        pusher.close()


def test_the_dry_run_reports_the_refusal(tmp_path, monkeypatch):
    images = [image(tmp_path, "pytorch", False, immutable=True)]
    pusher = Pusher(PushOptions(dry_run=True), log=lambda _line: None)
    # the registry's side is another test's: here no tag exists and every manifest is there
    monkeypatch.setattr(pusher, "immutable_now", lambda _images, _ds: ({}, ""))
    monkeypatch.setattr(pusher, "_would", lambda *_: "manifest present")
    try:
        lines, refusals = pusher.dry_run(images)
    finally:
        pusher.close()
    assert len(lines) == 3
    assert len(refusals) == 1 and refusals[0].startswith("immutable tags need reproducible")
    assert "pytorch (gfx950)" in refusals[0]
