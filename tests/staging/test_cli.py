"""The staging CLI: output, one-line errors and exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from tests.staging.conftest import age_tag, free_port, push_image, write_descriptor
from tools.staging import embedded
from tools.staging.cli import main


def binary(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [os.environ["STAGING_BIN"], *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )


def test_binary_start_stop(state):
    r = binary("start")
    port = os.environ[embedded.PORT_ENV]
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"127.0.0.1:{port}/staging\n"
    # the registry outlives the command that started it
    assert embedded.status()["running"]
    r = binary("stop")
    assert r.returncode == 0 and "stopped" in r.stdout
    assert not embedded.status()["running"]


def test_status_text_and_json(state, capsys):
    assert main(["status"]) == 0
    assert "stopped" in capsys.readouterr().out
    assert main(["start"]) == 0
    address = capsys.readouterr().out.strip()
    push_image(address.split("/")[0], "staging/x", "t1")
    assert main(["status", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["running"] and info["registry"] == address
    assert (info["repositories"], info["tags"]) == (1, 1) and info["storage_bytes"] > 0
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"running \(pid \d+\)", out) and "1 repositories, 1 tags" in out


def test_status_of_a_shared_registry(state, capsys):
    host = f"127.0.0.1:{embedded.ensure_running()}"  # any registry will do
    push_image(host, "team/s/a", "t")
    push_image(host, "other/b", "t")
    assert main(["status", "--staging", f"{host}/team/s", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["reachable"] and info["repositories"] == ["team/s/a"]
    assert main(["status", "--staging", f"127.0.0.1:{free_port()}/team"]) == 1
    captured = capsys.readouterr()
    assert "unreachable" in captured.out
    assert captured.err.startswith("staging: error: staging registry 127.0.0.1:")


def test_gc_command(state, tmp_path, capsys):
    host = f"127.0.0.1:{embedded.ensure_running()}"
    used = push_image(host, "staging/a", "used")
    push_image(host, "staging/a", "unused")
    out = tmp_path / "bazel-out"
    write_descriptor(out, used, f"{host}/staging", embedded_=True)
    age_tag(state, "staging/a", "unused", 7200)
    args = ["gc", "--descriptors", str(out), "--keep", "0", "--max-age", "1h"]
    assert main([*args, "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "would delete staging/a@" in text and "would delete 1 manifests" in text
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "deleted 1 manifests" in text and "storage" in text and "->" in text
    assert embedded.list_tags(state, "staging/a").keys() == {"used"}


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["gc", "--keep", "x"], "'x' is not a count"),
        (["gc", "--max-age", "soon"], "'soon' is not a duration"),
        (
            ["gc", "--max-age", "0s"],
            "0s is under gc's grace period of 1h: a build in another checkout may have pushed"
            " a tag that young, and its descriptor is not visible here; use 1h or more",
        ),
        (["gc", "--staging", "https://r.example.com/s"], "has a scheme"),
        (["status", "--staging", "r.example.com"], "has no prefix"),
        (["gc", "--descriptors", "/nonexistent/bazel-out"], "does not exist"),
        (["bogus"], "invalid choice"),
    ],
)
def test_errors_are_one_line_exit_2(args, fragment, state, capsys):
    with pytest.raises(SystemExit) as e:
        code = main(args)
        raise SystemExit(code)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("staging: error: ") and fragment in err
    assert err.count("\n") == 1


def test_gc_without_bazel_out_refuses(state, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BUILD_WORKSPACE_DIRECTORY", str(tmp_path))
    assert main(["gc"]) == 2
    assert "pass --descriptors DIR" in capsys.readouterr().err


def test_start_port_taken_is_exit_2(state, monkeypatch, capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        monkeypatch.setenv(embedded.PORT_ENV, str(s.getsockname()[1]))
        assert main(["start"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("staging: error: staging port") and err.count("\n") == 1


def test_start_reads_the_port_setting_as_a_port(state, monkeypatch, capsys):
    # `start` compared the variable's raw text with the port: 05480 is port 5480, as the
    # start itself read it (tools/envvars.py), not another port to move to
    port = int(os.environ[embedded.PORT_ENV])
    monkeypatch.setenv(embedded.PORT_ENV, f"0{port}")
    assert main(["start"]) == 0
    out, err = capsys.readouterr()
    assert out == f"127.0.0.1:{port}/staging\n"
    assert embedded.PORT_ENV not in err, err  # no note of a move
