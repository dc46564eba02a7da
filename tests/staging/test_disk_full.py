"""Staging's disk full, for real: an image build into an embedded registry whose storage is
a 6 MiB tmpfs (in a mount namespace of its own, so nothing on the host is mounted).

BuildKit reports only `blob upload invalid`; the registry says "no space left on device"
in its own log. The build must fail in one line that says so and points at gc.
"""

from __future__ import annotations

import json
import shutil

from tools.imagebuild import build
from tools.staging import embedded

DOCKERFILE = "tests/staging/diskfull/Dockerfile"  # runfiles path (cwd = runfiles root)


def small_disk_registry(tmp_path, state) -> str:
    """A docker-registry wrapper that mounts a 6 MiB tmpfs on the state dir's storage."""
    real = " ".join(embedded.registry_argv())
    unshare = shutil.which("unshare")
    assert unshare, "unshare (util-linux) is needed"
    state.data.mkdir(parents=True, exist_ok=True)
    wrapper = tmp_path / "registry-on-6m"
    wrapper.write_text(
        "#!/bin/sh\n"
        f"exec {unshare} --map-root-user --mount sh -c"
        f' \'mount -t tmpfs -o size=6m tmpfs {state.data} && exec {real} "$@"\' sh "$@"\n'
    )
    wrapper.chmod(0o755)
    return str(wrapper)


def test_a_full_staging_disk_fails_the_build_in_one_line_pointing_at_gc(
    state, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv(embedded.BIN_ENV, small_disk_registry(tmp_path, state))
    port = embedded.ensure_running()
    capsys.readouterr()  # its "started ... for this test only" note
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"target": "diskfull-probe", "repository": "diskfull-probe"}))
    log = tmp_path / "build.log"
    argv = ["--spec", str(spec), "--dockerfile", DOCKERFILE, "--network", "none"]
    argv += ["--host-file", "busybox=/usr/bin/busybox", "--output", str(tmp_path / "d.json")]
    assert build.main([*argv, "--log", str(log)]) == 1
    err = capsys.readouterr().err
    assert err == (
        "imagebuild: error: target diskfull-probe, arch noarch, tests/staging/diskfull/Dockerfile"
        f" stage (last): the embedded staging registry (127.0.0.1:{port}) is out of disk: its"
        f" log says 'no space left on device' ({state.log}; storage {state.data}); free space"
        " with `bazel run //tools/staging -- gc` (`--dry-run` first shows what goes), or on"
        f" that file system, then build again (whole log: {log})\n"
    )
    # what BuildKit said, which is all a user saw before
    assert "blob upload invalid" in log.read_text()
    assert not (tmp_path / "d.json").exists()
