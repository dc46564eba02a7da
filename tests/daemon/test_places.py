"""tools/places.py: where a user's files live: $HOME and XDG, except Bazel's stand-in HOME."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from tools import places
from tools.envvars import SettingError

PASSWD_HOME = pwd.getpwuid(os.getuid()).pw_dir


@pytest.fixture(autouse=True)
def plain(monkeypatch):
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "TEST_TMPDIR", "X_PLACES_DIR"):
        monkeypatch.delenv(name, raising=False)


def test_home_moves_every_per_user_path(monkeypatch):
    monkeypatch.setenv("HOME", "/tmp/x")
    assert places.home() == "/tmp/x"
    assert places.cache_dir() == Path("/tmp/x/.cache/rocm-pytorch-images")
    assert places.config_dir() == Path("/tmp/x/.config/rocm-pytorch-images")
    assert places.state_dir("X_PLACES_DIR", "x") == Path("/tmp/x/.cache/rocm-pytorch-images/x")
    assert places.log_file("~/a/b.log") == Path("/tmp/x/a/b.log")


def test_xdg_dirs_win_over_home(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", "/tmp/x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert places.cache_dir() == tmp_path / "cache" / "rocm-pytorch-images"
    assert places.config_dir() == tmp_path / "config" / "rocm-pytorch-images"
    assert places.state_dir("X_PLACES_DIR", "x") == tmp_path / "cache/rocm-pytorch-images/x"
    # the XDG spec calls a relative value invalid: one line, never another place unsaid
    monkeypatch.setenv("XDG_CACHE_HOME", "rel")
    with pytest.raises(ValueError, match=r"^XDG_CACHE_HOME=rel is not an absolute path \(the XDG"):
        places.cache_dir()


def test_without_home_or_with_bazels_stand_in_it_is_the_accounts(monkeypatch, tmp_path):
    monkeypatch.delenv("HOME", raising=False)  # a Bazel action or test: no HOME
    assert places.home() == PASSWD_HOME
    monkeypatch.setenv("HOME", str(tmp_path))  # or a test runner's stand-in: its TEST_TMPDIR
    monkeypatch.setenv("TEST_TMPDIR", str(tmp_path))
    assert places.home() == PASSWD_HOME
    assert places.cache_dir() == Path(PASSWD_HOME, ".cache", "rocm-pytorch-images")
    monkeypatch.setenv("HOME", "relative")  # not a home
    assert places.home() == PASSWD_HOME


def test_the_state_dir_comes_from_the_environment_first(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", "/tmp/x")
    monkeypatch.setenv("X_PLACES_DIR", str(tmp_path / "given"))
    assert places.state_dir("X_PLACES_DIR", "x") == tmp_path / "given"
    monkeypatch.setenv("X_PLACES_DIR", " ")  # blank: not given
    assert places.state_dir("X_PLACES_DIR", "x") == Path("/tmp/x/.cache/rocm-pytorch-images/x")


def test_a_relative_state_dir_is_refused_in_one_line(monkeypatch, tmp_path):
    # the workspace status command, each action and `bazel run` run in directories of
    # their own: a relative dir named three different state dirs, unsaid
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("X_PLACES_DIR", "rel/dir")
    with pytest.raises(SettingError) as e:
        places.state_dir("X_PLACES_DIR", "x")
    assert str(e.value).startswith("X_PLACES_DIR=rel/dir is not an absolute path (")
    assert str(e.value).endswith("; make it absolute or unset it")
    assert not (tmp_path / "rel").exists()
