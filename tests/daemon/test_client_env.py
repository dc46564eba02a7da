"""The client's engine, staging and mirror settings reach the Docker actions outside their
keys, or the action stops in one line: never the defaults in their place."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tools import client_env

CLIENT = {
    "DOCKER_HOST": "unix:///home/alice/.cache/rocm-pytorch-images/engine/docker.sock",
    "DOCKER_CONFIG": "/home/alice/.cache/rocm-pytorch-images/engine/docker-config",
    "ROCM_PYTORCH_MIRRORS": "/home/alice/mirrors with a space.toml",
    "ROCM_PYTORCH_STAGING_PORT": "5123",
    "USER": "alice",  # not one of them
}
SET = {k: v for k, v in CLIENT.items() if k != "USER"}


def settings_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "settings.json"
    path.write_text(text)
    return path


def bzl_names() -> list[str]:
    """CLIENT_NAMES of images/private/client_settings.bzl (what the repository rule reads)."""
    text = Path("images/private/client_settings.bzl").read_text()
    block = re.search(r"^CLIENT_NAMES = \[(.*?)\]", text, re.S | re.M)
    assert block, "no CLIENT_NAMES list in client_settings.bzl"
    return re.findall(r'"([A-Za-z_]+)"', block.group(1))


def test_the_repository_rule_reads_the_variables_the_tools_apply():
    assert bzl_names() == list(client_env.NAMES)


def test_settings_are_the_set_variables_only():
    assert client_env.settings({**CLIENT, "ROCM_PYTORCH_ENGINE_DIR": ""}) == SET


def test_apply_makes_the_environment_hold_exactly_the_builds_settings(tmp_path):
    path = settings_file(tmp_path, json.dumps(SET))
    environ = {
        "DOCKER_CONFIG": "/inherited/by/the/worker",  # the build's value wins
        "ROCM_PYTORCH_STAGING_DIR": "/a/previous/build/s",  # unset by this build: removed
        "PATH": "/bin",  # not one of them: kept
    }
    assert client_env.apply(path, environ) == SET
    assert environ == {**SET, "PATH": "/bin"}
    # nothing set in the client: every one unset in the action, none taken from elsewhere
    environ = {"DOCKER_HOST": "unix:///a/worker/started/with/it", "PATH": "/bin"}
    assert client_env.apply(settings_file(tmp_path, "{}\n"), environ) == {}
    assert environ == {"PATH": "/bin"}


def test_apply_without_a_file_changes_nothing():
    environ = {"DOCKER_HOST": "unix:///x"}
    assert client_env.apply(None, environ) == {} and environ == {"DOCKER_HOST": "unix:///x"}


@pytest.mark.parametrize(
    "text, message",
    [
        (None, "cannot read this build's client settings from"),
        ("", "is not a JSON object of strings"),
        ("{not json", "is not a JSON object of strings"),
        ('["DOCKER_HOST"]', "is not a JSON object of strings"),
        ('{"DOCKER_HOST": 1}', "is not a JSON object of strings"),
        ('{"DOCKER_HOTS": "x"}', "names DOCKER_HOTS, which this tool does not know"),
    ],
)
def test_an_unreadable_settings_file_is_a_one_line_error(tmp_path, text, message):
    path = tmp_path / "settings.json" if text is None else settings_file(tmp_path, text)
    environ = {"DOCKER_HOST": "unix:///kept"}
    with pytest.raises(client_env.ClientSettingsError) as e:
        client_env.apply(path, environ)
    out = str(e.value)
    assert message in out, out
    assert "\n" not in out
    assert str(path) in out
    assert environ == {"DOCKER_HOST": "unix:///kept"}  # nothing half applied
    if "does not know" not in message:
        # the command that writes it again, not "build again" (which does not: #42 1.8)
        assert "bazel fetch --force --repo=@rocm_pytorch_client" in out, out


def test_workspace_status_prints_only_the_commit():
    script = Path("tools/workspace_status.sh").resolve()
    env = {**os.environ, **CLIENT, "ROCM_PYTORCH_STAGING_AUTOSTART": "0"}
    proc = subprocess.run(
        ["bash", str(script)], cwd=Path.cwd(), env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    # the client's settings are no workspace status: Bazel deletes volatile-status.txt
    # at the start of each build, and an action that read it could find nothing
    assert all(line.startswith("STABLE_") for line in proc.stdout.splitlines()), proc.stdout


def test_workspace_status_names_the_changed_files_of_a_dirty_checkout(tmp_path):
    """A release refuses a dirty checkout (tools/tagconf); the status names what changed,
    so the refusal can say which files (the first five), not only that some did."""
    script = Path("tools/workspace_status.sh").resolve()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    for i in range(7):
        (tmp_path / f"f{i}.txt").write_text("a\n")
    (tmp_path / "new dir").mkdir()
    (tmp_path / "new dir" / "x y.txt").write_text("a\n")
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    env = {**os.environ, **CLIENT, "ROCM_PYTORCH_STAGING_AUTOSTART": "0"}

    def status() -> dict[str, str]:
        proc = subprocess.run(
            ["bash", str(script)], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
        return dict(line.split(" ", 1) for line in proc.stdout.splitlines())

    clean = status()
    assert clean["STABLE_GIT_DIRTY"] == "false" and "STABLE_GIT_CHANGED" not in clean
    (tmp_path / "new dir" / "x y.txt").write_text("b\n")
    (tmp_path / "f1.txt").chmod(0o755)  # a mode change is a change git reports
    (tmp_path / "untracked.txt").write_text("not part of the commit\n")
    dirty = status()
    assert dirty["STABLE_GIT_DIRTY"] == "true"
    assert dirty["STABLE_GIT_CHANGED"] == 'f1.txt, "new dir/x y.txt"', dirty
    for i in range(7):
        (tmp_path / f"f{i}.txt").write_text("b\n")
    assert status()["STABLE_GIT_CHANGED"] == "f0.txt, f1.txt, f2.txt, f3.txt, f4.txt, ..."


def test_the_build_log_line_names_where_the_settings_came_from():
    line = client_env.describe("external/x/settings.json", CLIENT)
    assert line.startswith("client settings (external/x/settings.json): DOCKER_HOST=unix://")
    assert "ROCM_PYTORCH_STAGING_PORT=5123" in line and "USER" not in line
    assert client_env.describe(None, {}).endswith("(this process's environment): none set")


def run_cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tools.client_env", *argv], capture_output=True, text=True
    )


@pytest.mark.parametrize("argv, code", [(["--help"], 0), ([], 2), (["show"], 2), (["status"], 2)])
def test_cli_usage(argv, code):
    proc = run_cli(*argv)
    assert proc.returncode == code
    out = proc.stdout if code == 0 else proc.stderr
    assert "python3 -m tools.client_env show FILE | start-staging" in out


def test_cli_show(tmp_path):
    proc = run_cli("show", str(settings_file(tmp_path, json.dumps(SET))))
    assert proc.returncode == 0, proc.stderr
    assert "ROCM_PYTORCH_STAGING_PORT=5123" in proc.stdout.splitlines()
    assert "ROCM_PYTORCH_STAGING_DIR (unset)" in proc.stdout.splitlines()
    proc = run_cli("show", str(settings_file(tmp_path, "BUILD_TIMESTAMP 1")))
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "client_env: error: " in proc.stderr


# --- every setting checked when a Bazel command starts (issue #42 1.5) --------------
# Before, a build that read none of these (every image up to date) succeeded without a
# word about a value no reader could use.
BAD_SETTINGS = [
    ("ROCM_PYTORCH_STAGING_PORT", "abc", "is not a port number; set it to 1-65535"),
    ("ROCM_PYTORCH_STAGING_PORT", "70000", "is not a port number; set it to 1-65535"),
    ("ROCM_PYTORCH_STAGING_PORT", "0", "is not a port number; set it to 1-65535"),
    ("ROCM_PYTORCH_ENGINE_AUTOSTART", "2", "is neither on nor off"),
    ("ROCM_PYTORCH_STAGING_AUTOSTART", "maybe", "is neither on nor off"),
    ("ROCM_PYTORCH_ENGINE_START_TIMEOUT", "abc", "is not a number of seconds"),
    ("ROCM_PYTORCH_BUILDER_TIMEOUT", "-5", "is not a number of seconds"),
    ("ROCM_PYTORCH_ENGINE_DIR", "engine-here", "is not an absolute path"),
    ("ROCM_PYTORCH_STAGING_DIR", "staging", "is not an absolute path"),
    ("ROCM_PYTORCH_MIRRORS", "mirrors.toml", "is not an absolute path"),
    ("DOCKER_CONTEXT", "hostb", "docker context inspect hostb --format"),
    ("BUILDX_BUILDER", "mybuilder", "unset BUILDX_BUILDER"),
    # the proxies and the CA bundle builds are given (tools/imagebuild/proxies.py)
    ("HTTPS_PROXY", "proxy.example:3128", "is not a proxy URL"),
    ("http_proxy", "ftp://proxy.example", "set it like http://proxy.example:3128"),
    ("SSL_CERT_FILE", "ca.pem", "is not an absolute path"),
    ("SSL_CERT_FILE", "/nonexistent/ca.pem", "is not a readable file"),
]


def clean_environ() -> dict[str, str]:
    names = {name for name, _, _ in BAD_SETTINGS}
    return {k: v for k, v in os.environ.items() if k not in names}


@pytest.mark.parametrize("name, value, words", BAD_SETTINGS)
def test_a_setting_no_reader_could_use_stops_the_command_in_one_line(name, value, words):
    with pytest.raises(client_env.envvars.SettingError) as e:
        client_env.check_settings({**clean_environ(), name: value})
    assert str(e.value).startswith((f"{name}={value!r}", f"{name}={value} ")), e.value
    assert words in str(e.value), e.value
    assert "\n" not in str(e.value)
    # what tools/workspace_status.sh runs before every build: exit 2, the one line
    proc = subprocess.run(
        [sys.executable, "-m", "tools.client_env", "start-staging"],
        env={**clean_environ(), name: value, "ROCM_PYTORCH_STAGING_AUTOSTART": "0"}
        if name != "ROCM_PYTORCH_STAGING_AUTOSTART"
        else {**clean_environ(), name: value},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [f"client_env: error: {e.value}"]


def test_good_settings_pass_the_check():
    client_env.check_settings(
        {
            "ROCM_PYTORCH_STAGING_PORT": "5123",
            "ROCM_PYTORCH_ENGINE_AUTOSTART": "off",
            "ROCM_PYTORCH_ENGINE_START_TIMEOUT": "2.5",
            "ROCM_PYTORCH_ENGINE_DIR": "/tmp/e",
            "ROCM_PYTORCH_MIRRORS": "/etc/m.toml",
            "DOCKER_CONTEXT": "default",  # the CLI's default context: DOCKER_HOST's engine
            "HTTPS_PROXY": "http://user:pw@proxy.example:3128",
            "all_proxy": "socks5h://127.0.0.1:1080/",
            "NO_PROXY": "internal.example,10.0.0.0/8",
            "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
        }
    )


def test_a_proxy_password_is_masked_where_the_settings_are_shown(tmp_path):
    line = client_env.describe(
        None, {"HTTPS_PROXY": "http://builder:pw-123@proxy.example:3128", "HOME": "/h"}
    )
    assert "pw-123" not in line
    assert "HTTPS_PROXY=http://builder:***@proxy.example:3128" in line
    with pytest.raises(client_env.envvars.SettingError) as e:
        client_env.check_settings({"HTTP_PROXY": "builder:pw-123@proxy.example"})
    assert "pw-123" not in str(e.value)
