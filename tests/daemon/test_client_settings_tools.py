"""Each tool a Docker action runs stops in one line when this build's client settings
cannot be read: it never builds, pushes or writes with the default engine, staging or
mirrors in their place (tools/client_env.py)."""

from __future__ import annotations

import pytest

from tools.imagebuild import build
from tools.registry import cli as registry
from tools.rehearsal import upstream
from tools.staging import embedded

ARGS = {
    "imagebuild": (
        build.main,
        ["--spec", "x.json", "--dockerfile", "Dockerfile", "--output", "x.out.json"],
    ),
    "registry": (registry.main, ["layout", "--descriptor", "x.json", "--spec", "x", "--out", "o"]),
    "upstream": (
        upstream.main,
        ["--config", "c", "--lock", "l", "--layout", "y", "--rocm-version", "1", "--output", "o"],
    ),
}


@pytest.mark.parametrize("tool", sorted(ARGS))
@pytest.mark.parametrize("content", [None, "BUILD_TIMESTAMP 1\n", '{"DOCKER_HOTS": "x"}'])
def test_unreadable_client_settings_stop_the_tool_in_one_line(
    tool, content, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    status = tmp_path / "settings.json"
    if content is not None:
        status.write_text(content)
    main, argv = ARGS[tool]
    flag = ["--client-settings", str(status)]
    argv = [*flag, *argv] if tool == "registry" else [*argv, *flag]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"{tool}: error: ") and str(status) in err, err
    assert "client_settings.bzl" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == (
        [] if content is None else ["settings.json"]
    ), "the tool wrote something"


@pytest.mark.parametrize("tool", sorted(ARGS))
def test_a_setting_the_tool_cannot_use_stops_it_in_one_line(tool, tmp_path, monkeypatch, capsys):
    # readable settings, one of them unusable: a relative staging dir would have named
    # another dir in the action's execution root than in the workspace status command
    monkeypatch.chdir(tmp_path)
    status = tmp_path / "settings.json"
    status.write_text('{"ROCM_PYTORCH_STAGING_DIR": "staging-here"}')

    def staging(*_args):  # what each tool's work reaches for first
        embedded.state_dir()

    if tool == "registry":
        monkeypatch.setitem(registry.COMMANDS, "layout", staging)
    else:
        monkeypatch.setattr(build if tool == "imagebuild" else upstream, "run", staging)
    main, argv = ARGS[tool]
    flag = ["--client-settings", str(status)]
    argv = [*flag, *argv] if tool == "registry" else [*argv, *flag]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"{tool}: error: ROCM_PYTORCH_STAGING_DIR=staging-here is not an absolute path (builds"
        " and `bazel run` each run in a directory of their own, so each would find another"
        " one); make it absolute or unset it"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]
