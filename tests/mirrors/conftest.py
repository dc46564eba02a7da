"""Fixtures: a mirror settings file of the test's own ($ROCM_PYTORCH_MIRRORS)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.mirrors import settings

PASSWORD = "s3cret-Mirror-pw"
CA_BODY = "MIIBcaFixtureBody0123456789"  # the test CA bundle's one line of "base64"


@pytest.fixture
def settings_file(tmp_path, monkeypatch) -> Path:
    """$ROCM_PYTORCH_MIRRORS pointing at tmp_path/mirrors.toml (not yet written)."""
    file = tmp_path / "mirrors.toml"
    monkeypatch.setenv(settings.ENV, str(file))
    return file


@pytest.fixture
def netrc_file(tmp_path) -> Path:
    file = tmp_path / "mirrors.netrc"
    file.write_text(f"machine 127.0.0.1 login builder password {PASSWORD}\n")
    file.chmod(0o600)
    return file


@pytest.fixture
def ca_file(tmp_path) -> Path:
    file = tmp_path / "ca.pem"
    file.write_text(f"-----BEGIN CERTIFICATE-----\n{CA_BODY}\n-----END CERTIFICATE-----\n")
    return file


@pytest.fixture
def no_settings(tmp_path, monkeypatch) -> Path:
    """No $ROCM_PYTORCH_MIRRORS and a home without the file: the defaults."""
    monkeypatch.delenv(settings.ENV, raising=False)
    monkeypatch.setattr(settings.places, "home", lambda: str(tmp_path / "home"))
    return settings.path()
