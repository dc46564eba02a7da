"""tools/places.py: where a user's state lives, whatever $HOME a Bazel test sets."""

from __future__ import annotations

from pathlib import Path

from tools import places


def test_the_state_dir_comes_from_the_environment_else_the_passwd_home(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))  # what Bazel tests do: not where state lives
    monkeypatch.delenv("X_PLACES_DIR", raising=False)
    assert places.state_dir("X_PLACES_DIR", "x") == Path(
        places.home(), ".cache", "rocm-pytorch-images", "x"
    )
    assert not str(places.state_dir("X_PLACES_DIR", "x")).startswith(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("X_PLACES_DIR", "rel/dir")
    assert places.state_dir("X_PLACES_DIR", "x") == tmp_path / "rel" / "dir"
