""".ci/catalogue_values.py: which files name the real catalogue's values.

The check runs on made-up catalogues and a temporary git tree here (this file
must not name the real catalogue's values either): a file naming a value is
reported, a seed-golden file is not, and a value is matched as a whole word
only. Then the tests' own catalogue is checked to share no value with the
real one (else the fixture tests would spell the real values after all).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest


def load_check():
    path = Path(".ci/catalogue_values.py")
    spec = importlib.util.spec_from_file_location("catalogue_values", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["catalogue_values"] = module
    spec.loader.exec_module(module)
    return module


check = load_check()

CATALOGUE = """
registry = "made-up.example:5000/team/images"

[defaults]
ROCM_VERSION = "8.7.6-full"
PYTHON_VERSION = "3.27"
PYTORCH_VERSION = "5.4.3"
VLLM_REF = "v0.91.2"
VCS_REF = ""
UPSTREAM_IMAGE = "made-up/upstream"
"""
VALUES = check.catalogue_values(CATALOGUE)


def test_the_values_are_the_defaults_and_the_registry_host():
    assert VALUES == {
        "ROCM_VERSION": "8.7.6-full",
        "PYTHON_VERSION": "3.27",
        "PYTORCH_VERSION": "5.4.3",
        "VLLM_REF": "v0.91.2",
        # the host only: a namespace (`team`) is a word tests use for other things
        "registry": "made-up.example:5000",
    }


@pytest.mark.parametrize(
    "line",
    [
        'PYTHON_VERSION = "3.27"',
        "base:8.7.6-full-3.27-gfx950",
        "torch==5.4.3",
        "vllm:v0.91.2-8.7.6-full-gfx950",
        "made-up.example:5000/team/pytorch:latest",
        "a sentence ending in 3.27.",
    ],
)
def test_a_value_as_a_whole_word_matches(line):
    assert check.pattern(VALUES).search(line), line


@pytest.mark.parametrize(
    "line",
    [
        "/usr/lib/python3.27/site-packages",  # the Python version, not the catalogue's
        "3.27.1",  # another version
        "13.27",
        "15.4.3",
        "5.4.30",
        "+rocm8.7.6.full.gfx950",  # glued to a word, and not 8.7.6-full
        "xv0.91.2",
        "made-up.example:50001",
    ],
)
def test_a_value_inside_another_word_or_version_does_not(line):
    assert not check.pattern(VALUES).search(line), line


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_a_tracked_file_naming_a_value_is_reported_the_seed_files_are_not(tmp_path):
    files = {
        "tests/x/test_names_it.py": 'TAG = "5.4.3-8.7.6-full-gfx950"\nOK = 1\nPY = "3.27"\n',
        "tests/x/test_clean.py": 'SITE = "lib/python3.27/site-packages"\nV = "5.4.30"\n',
        ".ci/check.py": "# builds the registry made-up.example:5000 pushes to\n",
        "docs/elsewhere.md": "5.4.3 outside tests and .ci is not looked at\n",
        "tests/x/untracked.py": 'V = "5.4.3"\n',
        **{path: "pytorch:5.4.3-8.7.6-full-gfx950\n" for path in check.SEED_GOLDEN},
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", *[p for p in files if p != "tests/x/untracked.py"])
    tracked = check.tracked(tmp_path)
    assert "docs/elsewhere.md" not in tracked and "tests/x/untracked.py" not in tracked
    assert set(check.SEED_GOLDEN) <= set(tracked)
    found = check.offenders(tracked, VALUES)
    assert sorted(found) == [".ci/check.py", "tests/x/test_names_it.py"]
    # each hit: its line number and text
    assert found["tests/x/test_names_it.py"] == [
        '1: TAG = "5.4.3-8.7.6-full-gfx950"',
        '3: PY = "3.27"',
    ]


def test_the_tests_own_catalogue_shares_no_value_with_the_real_one():
    real = check.catalogue_values(Path(check.CATALOG).read_text())
    fixture = Path("tests/fixtures/catalog.toml").read_text()
    assert real, "no values read from the real catalogue"
    hits = [line for line in fixture.splitlines() if check.pattern(real).search(line)]
    assert not hits, hits
