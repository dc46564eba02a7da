"""The CLI on hand-made layouts: collection, refusals and one-line errors. No Docker."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.wheelhouse.fakes import CATALOG, WHEELS, make_family, make_layout, make_wheel, tar_layer
from tools.wheelhouse.cli import build_parser
from tools.wheelhouse.errors import WheelhouseError


def one_line_error(err: str) -> str:
    """The error line: the last line on stderr, the only one of its kind, no traceback.

    (Progress lines such as "[1/8] ..." may come before it.)
    """
    lines = err.strip().splitlines()
    errors = [line for line in lines if line.startswith("wheelhouse: error: ")]
    assert errors == lines[-1:], err
    assert "Traceback" not in err
    return lines[-1]


def wheels_in(out) -> list[str]:
    return sorted(p.name for p in out.glob("*.whl"))


def test_help_of_the_binary_lists_the_sources():
    result = subprocess.run(
        [os.environ["WHEELHOUSE_BIN"], "--help"], capture_output=True, text=True, check=True
    )
    for flag in ("--arch", "--out", "--from-registry", "--from-layouts", "--layout", "--tag"):
        assert flag in result.stdout


def test_collects_one_arch_from_a_directory_and_skips_the_others(tmp_path, run):
    make_family(tmp_path / "bazel-out" / "a", "gfx950")
    make_family(tmp_path / "bazel-out" / "b", "gfx1201")
    out = tmp_path / "wh"
    rc, stdout, err = run("--arch", "gfx1201", "--out", out, "--from-layouts", tmp_path)
    assert rc == 0, err
    assert stdout.startswith(
        f"wheelhouse: 8 wheels for gfx1201, ROCm 10.1.0-full, from 8 images, in {out}\n"
    )
    assert f"pip install --index-url {(out / 'simple').as_uri()} torch vllm" in stdout
    # should take the gfx1201 wheels and one of the two (identical) triton-wheels
    names = wheels_in(out)
    assert len(names) == 8
    assert all("gfx1201" in n for n in names if not n.startswith("triton"))
    assert "skipped 7 layouts" in err
    manifest = json.loads((out / "wheelhouse.json").read_text())
    assert (manifest["arch"], manifest["rocm_version"]) == ("gfx1201", "10.1.0-full")
    assert [i["target"] for i in manifest["images"]] == list(WHEELS)
    index = (out / "simple" / "index.html").read_text()
    for project in ("torch", "vllm", "triton", "lmcache"):
        assert f'href="{project}/"' in index
        assert (out / "simple" / project / "index.html").is_file()


def test_a_layout_without_its_json_is_identified_by_its_labels(tmp_path, run):
    layout = make_layout(tmp_path, "pytorch-wheel", "gfx950", metadata=False)
    rc, stdout, err = run("--out", tmp_path / "wh", "--layout", layout, "--target", "pytorch-wheel")
    assert rc == 0, err
    assert "torch-1.0+rocm10.1.0.full.gfx950-py3-none-any.whl  pytorch-wheel (gfx950)" in stdout


def test_refuses_a_layout_of_another_arch_and_writes_nothing(tmp_path, run):
    make_family(tmp_path / "gfx950", "gfx950")
    odd = make_layout(tmp_path / "gfx1201", "vllm-wheel", "gfx1201")
    out = tmp_path / "wh"
    argv = ["--arch", "gfx950", "--out", out, "--from-layouts", tmp_path / "gfx950"]
    rc, _, err = run(*argv, "--layout", odd)
    assert rc == 2
    line = one_line_error(err)
    assert line == (
        "wheelhouse: error: refusing to mix archs: this is a gfx950 wheelhouse (--arch gfx950),"
        f" but vllm-wheel (gfx1201) from {odd} is built for gfx1201; leave it out,"
        " or collect a separate wheelhouse with --arch gfx1201"
    )
    assert not out.exists()


def test_refuses_mixed_rocm_versions(tmp_path, run):
    layouts = [
        make_layout(tmp_path, t, "gfx950" if t != "triton-wheel" else None)
        for t in WHEELS
        if t != "vllm-wheel"
    ]
    odd = make_layout(tmp_path / "new", "vllm-wheel", "gfx950", rocm="10.2.0")
    args = [a for p in [*layouts, odd] for a in ("--layout", p)]
    rc, _, err = run("--out", tmp_path / "wh", *args)
    assert rc == 2
    line = one_line_error(err)
    assert "refusing to mix ROCm versions: ROCm 10.1.0-full: pytorch-wheel (gfx950)," in line
    assert f"ROCm 10.2.0: vllm-wheel (gfx950) from {odd};" in line


def test_replaces_a_previous_wheelhouse(tmp_path, run):
    make_family(tmp_path / "a", "gfx950")
    make_family(tmp_path / "b", "gfx942")
    out = tmp_path / "wh"
    assert run("--arch", "gfx950", "--out", out, "--from-layouts", tmp_path / "a")[0] == 0
    rc, _, err = run("--arch", "gfx942", "--out", out, "--from-layouts", tmp_path / "b")
    assert rc == 0, err
    # should hold the gfx942 wheels only, and no scratch directory
    names = wheels_in(out)
    assert len(names) == 8 and not any("gfx950" in n for n in names)
    assert sorted(p.name for p in out.iterdir() if not p.name.endswith(".whl")) == [
        "simple",
        "wheelhouse.json",
    ]


def test_takes_wheels_layer_by_layer_with_whiteouts(tmp_path, run):
    old, old_data = make_wheel("torch", "1.0")
    new, new_data = make_wheel("torch", "2.0")
    layers = [
        tar_layer({"wheels/": None, f"./wheels/{old}": old_data, "etc/x.whl": b"no"}),
        tar_layer({f"wheels/.wh.{old}": b"", f"wheels/{new}": new_data}, compress=False),
    ]
    layout = make_layout(tmp_path, "pytorch-wheel", "gfx950", layers=layers)
    out = tmp_path / "wh"
    rc, _, err = run("--out", out, "--layout", layout, "--target", "pytorch-wheel")
    assert rc == 0, err
    assert wheels_in(out) == [new]
    assert (out / new).read_bytes() == new_data


def test_refuses_an_image_without_wheels(tmp_path, run):
    layout = make_layout(
        tmp_path, "pytorch-wheel", "gfx950", layers=[tar_layer({"fixture/x.txt": b"x"})]
    )
    rc, _, err = run("--out", tmp_path / "wh", "--layout", layout, "--target", "pytorch-wheel")
    assert rc == 2
    assert "no /wheels/*.whl in the image" in one_line_error(err)


def test_paths_are_relative_to_where_bazel_run_started(tmp_path, run, monkeypatch):
    make_family(tmp_path / "outs", "gfx950")
    monkeypatch.setenv("BUILD_WORKING_DIRECTORY", str(tmp_path))
    rc, _, err = run("--out", "wh", "--from-layouts", "outs")
    assert rc == 0, err
    assert len(wheels_in(tmp_path / "wh")) == 8


@pytest.mark.parametrize(
    "argv,want",
    [
        (
            [],
            "no source given; pass --from-registry [HOST/NS], --from-layouts DIR or --layout PATH",
        ),
        (
            ["--from-registry", "r:5000/ns", "--layout", "x.layout"],
            "--from-registry and --from-layouts/--layout both given; collect from one source",
        ),
        (
            ["--arch", "gfx951", "--layout", "x"],
            "--arch gfx951: unknown arch; did you mean 'gfx950'?",
        ),
        (["--target", "pytorch", "--layout", "x"], "--target pytorch: not a wheel target; did you"),
        (["--layout", "{tmp}/none.layout"], "none.layout: not an OCI layout (no index.json)"),
        (["--from-layouts", "{tmp}"], "no <name>.layout directory under"),
        (["--from-layouts", "{tmp}/missing"], "missing: not a directory"),
        (["--from-layouts", "{tmp}", "--tag", "versioned"], "--tag and --set choose registry tags"),
    ],
)
def test_user_errors_are_one_line_with_exit_2(tmp_path, run, argv, want):
    argv = [a.format(tmp=tmp_path) for a in argv]
    rc, _, err = run("--out", tmp_path / "wh", *argv)
    assert rc == 2
    assert want in one_line_error(err)


def test_argparse_errors_are_one_line_too(capsys):
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["--out", "x", "--bogus"])
    assert e.value.code == 2
    assert one_line_error(capsys.readouterr().err) == (
        "wheelhouse: error: unrecognized arguments: --bogus; see wheelhouse --help"
    )


def test_refuses_to_write_into_a_directory_that_is_not_a_wheelhouse(tmp_path, run):
    make_family(tmp_path / "outs")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "notes.txt").write_text("mine")
    rc, _, err = run("--out", tmp_path / "home", "--from-layouts", tmp_path / "outs")
    assert rc == 2
    assert "not empty and not a wheelhouse" in one_line_error(err)
    assert sorted(p.name for p in (tmp_path / "home").iterdir()) == ["notes.txt"]


def test_from_registry_without_a_value_uses_the_catalogue_registry(tmp_path, run, monkeypatch):
    import tools.wheelhouse.registry as registry

    seen = []

    class Source:
        def __init__(self, spec, **_kw):
            seen.append(spec)

        def image(self, catalog, target, repository, tag):
            seen.append(f"{repository}:{tag}")
            raise WheelhouseError("stop", "here")

        def close(self):
            seen.append("closed")

    monkeypatch.setattr(registry, "RegistrySource", Source)
    rc, _, err = run("--out", tmp_path / "wh", "--from-registry", "--target", "triton-wheel")
    assert rc == 2 and one_line_error(err) == "wheelhouse: error: stop; here"
    assert seen == [CATALOG.registry, "triton-wheel:latest", "closed"]


def test_immutable_tags_need_a_vcs_ref(tmp_path, run):
    argv = ["--out", tmp_path / "wh", "--from-registry", "127.0.0.1:1/x"]
    rc, _, err = run(*argv, "--tag", "immutable")
    assert rc == 2
    assert one_line_error(err) == (
        "wheelhouse: error: --tag immutable: no immutable tag without a VCS_REF;"
        " add --set VCS_REF=<sha>"
    )
