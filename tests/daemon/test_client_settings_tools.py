"""Each tool a Docker action runs stops in one line when this build's client settings
cannot be read: it never builds, pushes or writes with the default engine, staging or
mirrors in their place (tools/client_env.py)."""

from __future__ import annotations

import pytest

from tools.imagebuild import build
from tools.registry import cli as registry
from tools.rehearsal import upstream

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
