"""A staging hit: an image build whose content key staging already holds (whole) writes the
descriptor from it and does not run BuildKit: what a `bazel clean`, a new output base or a
fresh runner on the same staging would otherwise rebuild."""

from __future__ import annotations

import http.client
import json
import re

import pytest

from tools.imagebuild import build
from tools.staging import descriptor, embedded

DOCKERFILE = "tests/staging/reuse/Dockerfile"  # runfiles path (cwd = runfiles root)


def ran_buildkit(log: str) -> bool:
    """BuildKit's progress is in the log (its step numbers vary: a cached RUN may be #1)."""
    return re.search(r"^#\d+ \[internal\] load build definition", log, re.M) is not None


@pytest.fixture
def imagebuild(state, tmp_path, capsys):
    embedded.ensure_running()
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"target": "reuse-probe", "repository": "reuse-probe"}))

    def run(name: str, *extra: str) -> tuple[descriptor.Descriptor, str, str]:
        capsys.readouterr()
        out, log = tmp_path / f"{name}.json", tmp_path / f"{name}.log"
        argv = ["--spec", str(spec), "--dockerfile", DOCKERFILE, "--network", "none"]
        argv += ["--host-file", "busybox=/usr/bin/busybox", "--output", str(out)]
        assert build.main([*argv, "--log", str(log), *extra]) == 0, log.read_text()[-3000:]
        return descriptor.load(out), log.read_text(), capsys.readouterr().err

    return run


def test_an_image_staging_holds_is_reused_without_running_buildkit(imagebuild):
    first, log, _ = imagebuild("first")
    assert ran_buildkit(log)  # BuildKit ran
    second, log, err = imagebuild("second")
    ref = f"{first.staging_host}/{first.staging_name}:{first.staging_tag}"
    assert log.splitlines()[1] == f"# staging hit: {ref} is {first.digest}, whole; BuildKit not run"
    assert "#1 " not in log and "staging hit" in err
    assert (second.digest, second.content_key, second.manifest) == (
        first.digest,
        first.content_key,
        first.manifest,
    )


def test_a_staging_hit_needs_the_same_output_mode(imagebuild):
    plain, _, _ = imagebuild("plain")
    assert plain.reproducible is False  # no --reproducible: BuildKit's plain output
    release, log, _ = imagebuild("release", "--reproducible")
    # another content key: the plain image is not reused for a release, nor the other way
    assert release.content_key != plain.content_key and release.staging_tag != plain.staging_tag
    assert ran_buildkit(log) and release.reproducible is True
    assert "rewrite-timestamp=true" in log.splitlines()[2]  # the buildx command line
    again, log, _ = imagebuild("again")
    assert "# staging hit" in log and (again.digest, again.reproducible) == (plain.digest, False)
    again, log, _ = imagebuild("release-again", "--reproducible")
    assert "# staging hit" in log and (again.digest, again.reproducible) == (release.digest, True)


def test_a_staged_image_that_lost_a_blob_is_built_again(imagebuild, state):
    # reproducible: the rebuild must give the same digest (BuildKit's plain output would too
    # from its cache, but a release build is what promises it)
    first, _, _ = imagebuild("first", "--reproducible")
    layer = first.layers[-1].digest
    host = first.staging_host
    conn = http.client.HTTPConnection(*host.split(":"))
    conn.request("DELETE", f"/v2/{first.staging_name}/blobs/{layer}")
    assert conn.getresponse().status == 202
    second, log, _ = imagebuild("second", "--reproducible")
    assert f"staged, but staging lost blob {layer}: building" in log.splitlines()[1]
    assert ran_buildkit(log)
    assert second.digest == first.digest  # reproducible: the same image, whole again
    _, log, _ = imagebuild("third", "--reproducible")
    assert "# staging hit" in log


def test_no_reuse_runs_buildkit(imagebuild):
    imagebuild("first")
    _, log, _ = imagebuild("second", "--no-reuse")
    assert "--no-reuse: building" in log and ran_buildkit(log)
