"""The PEP 503 index writer: names, links, files, and pip reading it."""

from __future__ import annotations

import hashlib
import re

import pytest

from tests.wheelhouse.fakes import import_build_info, make_wheel, pip_install
from tools.wheelhouse.errors import WheelhouseError
from tools.wheelhouse.index import (
    WheelFile,
    normalize,
    parse_filename,
    project_of,
    render_project,
    render_root,
    write_index,
)

TORCH = "torch-4.5.6+rocm9.8.7.full.gfx950-py3-none-any.whl"


@pytest.mark.parametrize(
    "name,want",
    [("torch", "torch"), ("Foo_Bar", "foo-bar"), ("a.b-_c", "a-b-c"), ("LMCache", "lmcache")],
)
def test_normalize_follows_pep_503(name, want):
    assert normalize(name) == want


def test_parse_filename_reads_local_versions_and_build_tags():
    assert parse_filename(TORCH) == {
        "name": "torch",
        "version": "4.5.6+rocm9.8.7.full.gfx950",
        "python": "py3",
        "abi": "none",
        "platform": "any",
    }
    assert parse_filename("Foo_Bar-1.0-1b-cp314-cp314-linux_x86_64.whl")["build"] == "1b"
    assert project_of("Foo_Bar-1.0-py3-none-any.whl") == "foo-bar"


@pytest.mark.parametrize("bad", ["torch.whl", "torch-1.0.whl", "../x-1-py3-none-any.whl", "x.tar"])
def test_parse_filename_refuses_non_wheels(bad):
    with pytest.raises(WheelhouseError, match="not a wheel file name"):
        parse_filename(bad)


def test_project_page_links_each_file_relatively_with_its_sha256():
    page = render_project("torch", [WheelFile(TORCH, "ab" * 32)])
    (href,) = re.findall(r'href="([^"]+)"', page)
    # should point from simple/torch/ back to OUT/, with the + quoted and the hash
    assert href == f"../../{TORCH.replace('+', '%2B')}#sha256={'ab' * 32}"
    # should show the file name as the link text (PEP 503)
    assert f">{TORCH}</a>" in page
    assert 'name="pypi:repository-version" content="1.0"' in page


def test_root_page_links_each_normalized_project_once():
    page = render_root(["vllm", "torch", "torch"])
    assert re.findall(r'href="([^"]+)"', page) == ["torch/", "vllm/"]


def test_write_index_groups_files_by_normalized_project(tmp_path):
    files = [
        WheelFile("Foo_Bar-1.0-py3-none-any.whl", "11" * 32),
        WheelFile("foo.bar-2.0-py3-none-any.whl", "22" * 32),
        WheelFile(TORCH, "33" * 32),
    ]
    simple = write_index(tmp_path, files)
    assert simple == tmp_path / "simple"
    assert sorted(p.name for p in simple.iterdir()) == ["foo-bar", "index.html", "torch"]
    foo = (simple / "foo-bar" / "index.html").read_text()
    # should list both spellings of the project on one page
    assert "Foo_Bar-1.0-py3-none-any.whl" in foo and "foo.bar-2.0-py3-none-any.whl" in foo
    assert "#sha256=" + "22" * 32 in foo


def test_pip_installs_from_the_written_index_and_nothing_else(tmp_path):
    out = tmp_path / "wh"
    out.mkdir()
    files = []
    for dist, version in [("torch", "4.5.6+rocm9.8.7.full.gfx950"), ("vllm", "0.77.1")]:
        name, data = make_wheel(dist, version, f"BUILD_INFO = {{'dist': {dist!r}}}")
        (out / name).write_bytes(data)
        files.append(WheelFile(name, hashlib.sha256(data).hexdigest()))
    write_index(out, files)
    site = tmp_path / "site"
    result = pip_install(out / "simple", site, "torch", "vllm")
    assert result.returncode == 0, result.stdout + result.stderr
    # should look in the wheelhouse only
    indexes = re.findall(r"Looking in indexes: (.*)", result.stdout)
    assert indexes in ([], [(out / "simple").as_uri()]), result.stdout
    assert import_build_info(site, "torch", "vllm") == {
        "torch": {"dist": "torch"},
        "vllm": {"dist": "vllm"},
    }


def test_pip_refuses_a_wheel_whose_hash_does_not_match(tmp_path):
    out = tmp_path / "wh"
    out.mkdir()
    name, data = make_wheel("torch", "1.0")
    (out / name).write_bytes(data)
    write_index(out, [WheelFile(name, "00" * 32)])
    result = pip_install(out / "simple", tmp_path / "site", "torch")
    # should fail: the #sha256= fragment is checked by pip
    assert result.returncode != 0
    assert "hash" in (result.stdout + result.stderr).lower()
