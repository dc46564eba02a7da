"""The stand-in sources: their configuration, reproducible repositories, and a real
git daemon that fetch-source.sh reaches through a [git.rewrite] as it reaches GitHub."""

import re
import subprocess
from pathlib import Path

import pytest

from tools.mirrors import settings
from tools.rehearsal import sources
from tools.tagconf import catalog

FETCH = Path("docker/scripts/fetch-source.sh").resolve()
# Made-up values for the made-up sources below (no real catalogue's)
DEFAULTS = {"TRITON_VERSION": "7.8.9", "PYTORCH_VERSION": "4.5.6"}


def _config(tmp_path: Path, text: str, files: tuple[str, ...] = ("a", "b")) -> Path:
    for name in files:
        d = tmp_path / "sources" / name
        d.mkdir(parents=True, exist_ok=True)
        (d / "README.md").write_text(f"{name}\n")
    config = tmp_path / "sources.toml"
    config.write_text(text)
    return config


TWO = """
[[source]]
name = "a"
url = "https://github.com/org/a.git"
ref = "v${TRITON_VERSION}"
submodules = { "third_party/b" = "b" }

[[source]]
name = "b"
url = "https://github.com/org/b.git"
"""


def test_the_checked_in_sources_load_with_the_catalogues_tags():
    loaded = {s.name: s for s in sources.load()}
    real = catalog.load(sources.CATALOG).defaults
    assert loaded["triton"].url == "https://github.com/triton-lang/triton.git"
    assert loaded["triton"].ref == "v" + real["TRITON_VERSION"]
    assert loaded["pytorch"].ref == "v" + real["PYTORCH_VERSION"]
    assert loaded["pytorch"].submodules == (("third_party/cpuinfo", "cpuinfo"),)
    assert loaded["pytorch"].path == "github.com/pytorch/pytorch.git"
    assert dict(loaded["pytorch"].pins) == {
        "cmake/External/aotriton.cmake": "aotriton",
        ".ci/magma-rocm/build_magma.sh": "magma",
    }
    assert loaded["vllm"].ref == real["VLLM_REF"]
    assert loaded["lmcache"].path == "github.com/LMCache/LMCache.git"
    assert loaded["lmcache"].ref == real["LMCACHE_REF"]
    # Dockerfile.vllm fetches ROCm's Triton by commit (TRITON_KERNELS_REF): no tag.
    assert (loaded["rocm-triton"].url, loaded["rocm-triton"].ref) == (
        "https://github.com/ROCm/triton.git",
        "",
    )
    for s in loaded.values():
        assert s.files.is_dir(), s.files


def _arg_default(dockerfile: str, name: str) -> str:
    text = Path(dockerfile).read_text()
    m = re.search(rf"^ARG {name}=(\S+)$", text, re.M)
    assert m, f"{dockerfile} has no ARG {name}=..."
    return m.group(1)


def test_the_aiter_stand_in_is_tagged_as_dockerfile_aiter_fetches_it():
    # aiter has no catalogue version: its ref is the Dockerfile's ARG default.
    loaded = {s.name: s for s in sources.load()}
    assert loaded["aiter"].ref == _arg_default("docker/Dockerfile.aiter", "AITER_REF")
    assert loaded["aiter"].submodules == (("3rdparty/composable_kernel", "composable_kernel"),)
    # flash-attention is fetched by commit (FLASH_ATTN_REF): no tag, both submodules.
    assert loaded["flash-attention"].ref == ""
    assert dict(loaded["flash-attention"].submodules) == {
        "csrc/composable_kernel": "composable_kernel",
        "csrc/cutlass": "cutlass",
    }


def test_ucx_is_served_at_dockerfile_nixls_ucx_ref():
    # UCX is no catalogue entry: sources.toml names the tag Dockerfile.nixl's UCX_REF defaults to.
    loaded = {s.name: s for s in sources.load()}
    assert loaded["ucx"].url == "https://github.com/openucx/ucx.git"
    assert loaded["ucx"].ref == _arg_default("docker/Dockerfile.nixl", "UCX_REF")
    assert loaded["nixl"].url == "https://github.com/ai-dynamo/nixl.git"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[[source]]\nname = "a"\nurl = "https://github.com/o/a.git"\nbranch = "x"\n',
            "unknown keys",
        ),
        ('[[source]]\nname = "A b"\nurl = "https://github.com/o/a.git"\n', "not a lowercase word"),
        (
            '[[source]]\nname = "a"\nurl = "https://gitlab.com/o/a.git"\n',
            "is not https://github.com",
        ),
        (
            '[[source]]\nname = "a"\nurl = "https://github.com/o/a.git"\nref = "v${NOPE}"\n',
            "${NOPE}",
        ),
        (
            '[[source]]\nname = "a"\nurl = "https://github.com/o/a.git"\n'
            'submodules = { "x" = "zz" }\n',
            "names 'zz', which is no source",
        ),
        (
            '[[source]]\nname = "a"\nurl = "https://github.com/o/a.git"\n'
            '[[source]]\nname = "a"\nurl = "https://github.com/o/b.git"\n',
            "listed twice",
        ),
        ('[[source]]\nname = "c"\nurl = "https://github.com/o/c.git"\n', "has no files"),
        (
            '[[source]]\nname = "a"\nurl = "https://github.com/o/a.git"\n'
            'pins = { "README.md" = "zz" }\n',
            "pin in README.md names 'zz', which is no source",
        ),
        (
            '[[source]]\nname = "a"\nurl = "https://github.com/o/a.git"\n'
            '[[source]]\nname = "b"\nurl = "https://github.com/o/b.git"\n'
            'pins = { "README.md" = "a" }\n',
            "pin file README.md has no @a@ to fill in",
        ),
        ("[[source]\n", "sources.toml"),
    ],
)
def test_a_bad_configuration_names_the_problem(tmp_path, text, message):
    with pytest.raises(sources.SourcesError) as e:
        sources.load(_config(tmp_path, text), DEFAULTS)
    assert message in str(e.value)


def test_the_same_files_give_the_same_commits_anywhere(tmp_path):
    loaded = sources.load(_config(tmp_path, TWO), DEFAULTS)
    first = sources.build(loaded, tmp_path / "one")
    second = sources.build(loaded, tmp_path / "two")
    assert first == second
    (tmp_path / "sources" / "b" / "README.md").write_text("changed\n")
    third = sources.build(loaded, tmp_path / "three")
    assert third["b"] != first["b"] and third["a"] != first["a"]  # the gitlink moved too
    assert sources.fingerprint(loaded) != ""


def test_a_pin_is_the_pinned_sources_commit(tmp_path):
    config = _config(tmp_path, TWO.replace('name = "b"', 'name = "b"\npins = { "pin.txt" = "c" }')
                     + '[[source]]\nname = "c"\nurl = "https://github.com/org/c.git"\n',
                     files=("a", "b", "c"))  # fmt: skip
    (tmp_path / "sources" / "b" / "pin.txt").write_text("COMMIT=@c@\n")
    loaded = sources.load(config, DEFAULTS)
    commits = sources.build(loaded, tmp_path / "root")
    shown = subprocess.run(
        ["git", "--git-dir", str(tmp_path / "root/github.com/org/b.git"), "show", "main:pin.txt"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert shown == f"COMMIT={commits['c']}\n"
    assert (tmp_path / "sources" / "b" / "pin.txt").read_text() == "COMMIT=@c@\n"  # untouched


def test_an_arg_pin_becomes_a_rehearsal_define_of_the_stand_ins_commit(tmp_path):
    config = _config(tmp_path, '[args]\nSOME_REF = "b"\n' + TWO)
    loaded = sources.load(config, DEFAULTS)
    pins = sources.arg_pins(config)
    assert pins == {"SOME_REF": "b"}
    text = sources.bazelrc(loaded, pins)
    commit = sources.build(loaded, tmp_path / "root")["b"]
    assert text.splitlines()[-1] == f"build:rehearsal --define SOME_REF={commit}"
    assert text == sources.bazelrc(loaded, pins)  # the same on every run


@pytest.mark.parametrize(
    "table,message",
    [
        ('[args]\nSOME_REF = "zz"\n', "[args] SOME_REF names 'zz', which is no source"),
        ('[args]\nsome_ref = "b"\n', "[args] 'some_ref' is not a build arg name"),
    ],
)
def test_a_bad_arg_pin_names_the_problem(tmp_path, table, message):
    with pytest.raises(sources.SourcesError) as e:
        sources.arg_pins(_config(tmp_path, table + TWO))
    assert message in str(e.value)


def test_the_checked_in_arg_pins_name_optional_build_args_of_docker():
    dockerfiles = "".join(p.read_text() for p in Path("docker").glob("Dockerfile.*"))
    for arg in sources.arg_pins():
        assert f"ARG {arg}=" in dockerfiles, f"sources.toml [args] {arg}: no Dockerfile has it"


def _fetch(gitconfig: Path, url: str, ref: str, dest: Path, *extra: str) -> str:
    proc = subprocess.run(
        ["bash", str(FETCH), url, ref, str(dest), *extra],
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(dest.parent),
            "GIT_CONFIG_GLOBAL": str(gitconfig),
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout + proc.stderr


def test_fetch_source_gets_tags_commits_and_submodules_through_a_rewrite(tmp_path, monkeypatch):
    monkeypatch.setenv(sources.DIR_ENV, str(tmp_path / "state"))
    loaded = sources.load(_config(tmp_path, TWO), DEFAULTS)
    port = sources.start(loaded)
    try:
        assert sources.start(loaded) == port  # a running server is shared
        original, mirror = sources.rewrite(port)
        gitconfig = tmp_path / "gitconfig"
        gitconfig.write_text(f'[url "{mirror}"]\n\tinsteadOf = {original}\n')
        commits = sources.commits()

        out = _fetch(
            gitconfig, "https://github.com/org/a.git", "v7.8.9", tmp_path / "a", "--recursive"
        )
        assert f"at {commits['a']}" in out
        assert (tmp_path / "a" / "third_party" / "b" / "README.md").read_text() == "b\n"
        out = _fetch(gitconfig, "https://github.com/org/b.git", commits["b"], tmp_path / "b")
        assert f"at {commits['b']}" in out

        # A stand-in changed: the running server serves the new commit on the same port.
        (tmp_path / "sources" / "b" / "README.md").write_text("changed\n")
        assert sources.start(loaded) == port
        assert sources.commits()["b"] != commits["b"]
        _fetch(gitconfig, "https://github.com/org/b.git", sources.commits()["b"], tmp_path / "b2")
        assert (tmp_path / "b2" / "README.md").read_text() == "changed\n"
    finally:
        with sources.daemon.locked(sources.paths().lock):
            assert sources._stop(sources.paths())
    assert sources.main(["status"]) == 1


def test_start_writes_a_mirror_settings_file_the_builds_accept(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(sources.DIR_ENV, str(tmp_path / "state"))
    mirrors = tmp_path / "mirrors.toml"
    try:
        # --no-rust: the Rust servers download Debian's toolchain (test_rust.py has them)
        assert sources.main(["start", "--no-rust", "--mirrors", str(mirrors)]) == 0
        port = int((tmp_path / "state" / "port").read_text())
        loaded = settings.load(mirrors)
        assert loaded.git_rewrite == {"https://github.com/": f"git://127.0.0.1:{port}/github.com/"}
        assert "[git.rewrite]" in capsys.readouterr().out
        assert sources.main(["status"]) == 0
        # the checked-in sources: triton at the catalogue's tag
        triton = "v" + catalog.load(sources.CATALOG).defaults["TRITON_VERSION"]
        assert triton in capsys.readouterr().out
    finally:
        assert sources.main(["stop"]) == 0
