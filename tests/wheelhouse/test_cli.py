"""The CLI on hand-made descriptors and a fake staging: collection, refusals, errors. No Docker."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess

import pytest

from tests.wheelhouse.fakes import (
    CATALOG,
    ROCM,
    WHEELS,
    make_descriptor,
    make_family,
    make_wheel,
    tar_layer,
)
from tools.staging import descriptor as desc
from tools.wheelhouse.cli import build_parser
from tools.wheelhouse.errors import WheelhouseError
from tools.wheelhouse.staged import find_descriptors


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


def bazel_out(root, staging, archs=("gfx950", "gfx1201")):
    """A bazel-out-like tree: each arch's images in its own transitioned configuration,
    arch-free ones in a noarch one, runfiles copies, spec/build JSON, test logs.
    Returns the bazel-out symlink (as in a workspace) and the descriptors written.
    """
    real = root / "execroot" / "_main" / "bazel-out"
    written = []
    for n, arch in enumerate(archs):
        for t in WHEELS:
            if not CATALOG.builds(CATALOG.target(t), arch):
                continue  # aiter-wheel: CDNA only
            arch_free = not CATALOG.target(t).arch
            config = "k8-fastbuild-ST-0000noarch" if arch_free else f"k8-fastbuild-ST-{n:04d}{arch}"
            d = real / config / "bin" / "images"
            path = d / f"{t}.json" if arch_free else d / f"{t}.{arch}.json"
            if not path.exists():
                written.append(
                    make_descriptor(d, staging, t, None if arch_free else arch, name=path.stem)
                )
            # the image rule's other outputs, next to the descriptor
            (d / f"{path.stem}.spec.json").write_text(json.dumps({"target": t, "tags": {}}))
            (d / f"{path.stem}.build.json").write_text(json.dumps({"target": t}))
    # a test's runfiles tree holds copies of descriptors: found once, not twice
    runfiles = real / "k8-fastbuild" / "bin" / "tests" / "x_test.runfiles" / "_main" / "images"
    runfiles.mkdir(parents=True)
    shutil.copy(written[0], runfiles)
    logs = real / "k8-fastbuild" / "testlogs" / "tests" / "x_test"
    logs.mkdir(parents=True)
    (logs / "test.xml").write_text("<testsuites/>")
    (logs / "broken.json").write_text("{not json")
    (real / "_tmp").mkdir()
    (root / "bazel-out").symlink_to(real)
    return root / "bazel-out", written


# -- discovery -------------------------------------------------------------------


def test_finds_every_descriptor_under_bazel_out_and_nothing_else(tmp_path, staging):
    top, written = bazel_out(tmp_path, staging)
    d = written[0].parent
    # look-alikes that are not descriptors of their own
    shutil.copy(written[1], d / "copied.spec.json")  # skipped by name, content regardless
    shutil.copy(written[1], d / "copied.build.json")
    (d / "other.json").write_text(json.dumps({"schema": 1, "digest": "sha256:1"}))  # no staging
    big = json.loads(written[2].read_text())
    big["padding"] = " " * (1 << 20)
    (d / "big.json").write_text(json.dumps(big))
    layout = d / "x.layout"
    layout.mkdir()
    shutil.copy(written[3], layout / "index.json")

    found = find_descriptors([top])
    assert sorted(f.path for f in found) == sorted(
        top / p.relative_to(top.readlink()) for p in written
    )
    assert len(found) == 14  # 7 arch wheels for gfx950, 6 for gfx1201 (no aiter), triton once
    assert {(f.target, f.arch) for f in found} >= {
        ("vllm-wheel", "gfx1201"),
        ("triton-wheel", None),
    }


def test_finding_a_directory_twice_finds_each_descriptor_once(tmp_path, staging):
    top, written = bazel_out(tmp_path, staging, archs=("gfx950",))
    bin_dir = top / "k8-fastbuild-ST-0000gfx950" / "bin"
    assert len(find_descriptors([top, bin_dir])) == len(written)


# -- collection --------------------------------------------------------------------


def test_help_of_the_binary_lists_the_sources():
    result = subprocess.run(
        [os.environ["WHEELHOUSE_BIN"], "--help"], capture_output=True, text=True, check=True
    )
    for flag in ("--arch", "--out", "--from-registry", "--from-staging", "--descriptor", "--tag"):
        assert flag in result.stdout
    assert "--layout" not in result.stdout


def test_collects_one_arch_from_bazel_out_and_skips_the_others(tmp_path, run, staging):
    top, _ = bazel_out(tmp_path, staging)
    out = tmp_path / "wh"
    rc, stdout, err = run("--arch", "gfx1201", "--out", out, "--from-staging", top)
    assert rc == 0, err
    assert stdout.startswith(
        f"wheelhouse: 7 wheels for gfx1201, ROCm {ROCM}, from 7 images, in {out}\n"
    )
    assert f"pip install --index-url {(out / 'simple').as_uri()} torch vllm" in stdout
    names = wheels_in(out)
    # should need no aiter wheel: the catalogue builds aiter for gfx942 and gfx950 only
    assert len(names) == 7 and not any(n.startswith("aiter") for n in names)
    assert all("gfx1201" in n for n in names if not n.startswith("triton"))
    assert "skipped 7 staged images of other archs or targets" in err
    manifest = json.loads((out / "wheelhouse.json").read_text())
    assert (manifest["arch"], manifest["rocm_version"]) == ("gfx1201", ROCM)
    # should say, where the wheels are published and as it ends, that they are for the
    # family's images only and what fails outside them
    statement = f"these wheels are for the rocm-pytorch images for gfx1201 (ROCm {ROCM}) only"
    assert manifest["for"].startswith(statement)
    assert (out / "README.txt").read_text() == manifest["for"] + "\n"
    assert stdout.splitlines()[-1] == f"note: {manifest['for']}"
    for named in ("/opt/rocm", "neither bundle it nor declare it", "import torch",
                  "libamdhip64.so", "runtime:*-gfx1201"):  # fmt: skip
        assert named in manifest["for"], named
    assert [i["target"] for i in manifest["images"]] == [t for t in WHEELS if t != "aiter-wheel"]
    vllm = next(i for i in manifest["images"] if i["target"] == "vllm-wheel")
    assert vllm["origin"] == str(
        top / "k8-fastbuild-ST-0001gfx1201/bin/images/vllm-wheel.gfx1201.json"
    )
    assert vllm["digest"] == desc.load(vllm["origin"]).digest
    index = (out / "simple" / "index.html").read_text()
    for project in ("torch", "vllm", "triton", "lmcache"):
        assert f'href="{project}/"' in index
        assert (out / "simple" / project / "index.html").is_file()
    # only the collected images' layers were read from staging, each once
    assert len(staging.gets("blobs")) == 7


def test_refuses_a_descriptor_of_another_arch_and_reads_no_layer(tmp_path, run, staging):
    make_family(tmp_path / "gfx950", staging, "gfx950")
    odd = make_descriptor(tmp_path / "gfx1201", staging, "vllm-wheel", "gfx1201")
    out = tmp_path / "wh"
    argv = ["--arch", "gfx950", "--out", out, "--from-staging", tmp_path / "gfx950"]
    rc, _, err = run(*argv, "--descriptor", odd)
    assert rc == 2
    line = one_line_error(err)
    assert line == (
        "wheelhouse: error: refusing to mix archs: this is a gfx950 wheelhouse (--arch gfx950),"
        f" but vllm-wheel (gfx1201) from {odd} is built for gfx1201; leave it out,"
        " or collect a separate wheelhouse with --arch gfx1201"
    )
    assert not out.exists()
    assert staging.requests == []  # identity comes from the descriptors alone


def test_refuses_mixed_rocm_versions(tmp_path, run, staging):
    paths = [
        make_descriptor(tmp_path, staging, t, "gfx950" if t != "triton-wheel" else None)
        for t in WHEELS
        if t != "vllm-wheel"
    ]
    odd = make_descriptor(tmp_path / "new", staging, "vllm-wheel", "gfx950", rocm="10.2.0")
    args = [a for p in [*paths, odd] for a in ("--descriptor", p)]
    rc, _, err = run("--out", tmp_path / "wh", *args)
    assert rc == 2
    line = one_line_error(err)
    assert f"refusing to mix ROCm versions: ROCm {ROCM}: pytorch-wheel (gfx950)," in line
    assert f"ROCm 10.2.0: vllm-wheel (gfx950) from {odd};" in line


def test_an_image_without_a_version_label_has_no_rocm_version(tmp_path, run, staging):
    path = make_descriptor(tmp_path, staging, "pytorch-wheel", "gfx950", labels=False)
    argv = ["--out", tmp_path / "wh", "--descriptor", path, "--target", "pytorch-wheel"]
    rc, _, err = run(*argv)
    assert rc == 2
    assert f"cannot tell the ROCm version of pytorch-wheel (gfx950) from {path}" in (
        one_line_error(err)
    )


def test_refuses_a_descriptor_its_labels_contradict(tmp_path, run, staging):
    path = make_descriptor(tmp_path, staging, "vllm-wheel", "gfx950")
    data = json.loads(path.read_text())
    data["arch"] = "gfx942"  # the manifest is unchanged: the digest still checks out
    path.write_text(json.dumps(data))
    rc, _, err = run("--arch", "gfx942", "--out", tmp_path / "wh", "--descriptor", path)
    assert rc == 2
    assert (
        f"{path}: its descriptor says vllm-wheel (gfx942) but the image's labels say"
        " vllm-wheel (gfx950)" in one_line_error(err)
    )


def test_replaces_a_previous_wheelhouse(tmp_path, run, staging):
    make_family(tmp_path / "a", staging, "gfx950")
    make_family(tmp_path / "b", staging, "gfx942")
    out = tmp_path / "wh"
    assert run("--arch", "gfx950", "--out", out, "--from-staging", tmp_path / "a")[0] == 0
    rc, _, err = run("--arch", "gfx942", "--out", out, "--from-staging", tmp_path / "b")
    assert rc == 0, err
    # should hold the gfx942 wheels only, and no scratch directory
    names = wheels_in(out)
    assert len(names) == 8 and not any("gfx950" in n for n in names)
    assert sorted(p.name for p in out.iterdir() if not p.name.endswith(".whl")) == [
        "README.txt",
        "simple",
        "wheelhouse.json",
    ]
    assert "for gfx942 (ROCm" in (out / "README.txt").read_text()


def test_takes_wheels_layer_by_layer_with_whiteouts(tmp_path, run, staging):
    old, old_data = make_wheel("torch", "1.0")
    new, new_data = make_wheel("torch", "2.0")
    layers = [
        tar_layer({"wheels/": None, f"./wheels/{old}": old_data, "etc/x.whl": b"no"}),
        tar_layer({f"wheels/.wh.{old}": b"", f"wheels/{new}": new_data}, compress=False),
    ]
    path = make_descriptor(tmp_path, staging, "pytorch-wheel", "gfx950", layers=layers)
    media_types = [b.media_type for b in desc.load(path).layers]
    assert media_types == [
        "application/vnd.oci.image.layer.v1.tar+gzip",
        "application/vnd.oci.image.layer.v1.tar",
    ]
    out = tmp_path / "wh"
    rc, _, err = run("--out", out, "--descriptor", path, "--target", "pytorch-wheel")
    assert rc == 0, err
    assert wheels_in(out) == [new]
    assert (out / new).read_bytes() == new_data


def test_refuses_an_image_without_wheels(tmp_path, run, staging):
    path = make_descriptor(
        tmp_path, staging, "pytorch-wheel", "gfx950", layers=[tar_layer({"fixture/x.txt": b"x"})]
    )
    rc, _, err = run("--out", tmp_path / "wh", "--descriptor", path, "--target", "pytorch-wheel")
    assert rc == 2
    assert "no /wheels/*.whl in the image" in one_line_error(err)


def test_paths_are_relative_to_where_bazel_run_started(tmp_path, run, monkeypatch, staging):
    make_family(tmp_path / "outs", staging, "gfx950")
    monkeypatch.setenv("BUILD_WORKING_DIRECTORY", str(tmp_path))
    rc, _, err = run("--out", "wh", "--from-staging", "outs")
    assert rc == 0, err
    assert len(wheels_in(tmp_path / "wh")) == 8
    rc, _, err = run(
        "--out", "wh", "--descriptor", "outs/triton-wheel.json", "--target", "triton-wheel"
    )
    assert rc == 0, err


# -- staging lost an image -------------------------------------------------------------


def staged_vllm(tmp_path, staging):
    path = make_descriptor(tmp_path, staging, "vllm-wheel", "gfx950")
    return path, desc.load(path)


FORGET = "; run `bazel run //tools/staging -- forget` and build again (it rebuilds what is missing)"


def test_a_blob_staging_lost_is_one_line_saying_to_rebuild(tmp_path, run, staging):
    path, d = staged_vllm(tmp_path, staging)
    layer = d.layers[0].digest
    staging.lose(d.staging_name, layer)
    out = tmp_path / "wh"
    rc, _, err = run("--out", out, "--descriptor", path, "--target", "vllm-wheel")
    assert rc == 2
    assert one_line_error(err) == (
        f"wheelhouse: error: staging has lost blob {layer} of vllm-wheel (gfx950) {d.digest}"
        f" ({staging.host}/staging/vllm-wheel@{d.digest}), named by {path}" + FORGET
    )
    assert not out.exists()
    assert staging.gets("blobs") == []  # found out before reading any layer


def test_a_manifest_staging_lost_is_one_line_saying_to_rebuild(tmp_path, run, staging):
    path, d = staged_vllm(tmp_path, staging)
    staging.lose(d.staging_name, d.digest)
    rc, _, err = run("--out", tmp_path / "wh", "--descriptor", path, "--target", "vllm-wheel")
    assert rc == 2
    assert one_line_error(err) == (
        f"wheelhouse: error: staging has lost vllm-wheel (gfx950) {d.digest}"
        f" ({d.staging_ref}), named by {path}" + FORGET
    )


def test_a_layer_lost_while_reading_is_one_line_too(tmp_path, run, staging):
    path, d = staged_vllm(tmp_path, staging)
    layer = d.layers[0].digest
    # still there when checked (HEAD), gone when read (GET)
    staging.lose_on_get.add((d.staging_name, layer))
    out = tmp_path / "wh"
    rc, _, err = run("--out", out, "--descriptor", path, "--target", "vllm-wheel")
    assert rc == 2
    assert one_line_error(err) == (
        f"wheelhouse: error: staging has lost layer {layer} of vllm-wheel (gfx950) {d.digest}"
        f" ({d.staging_ref}), named by {path}" + FORGET
    )
    assert not list(out.iterdir())  # scratch removed, nothing written


def test_a_stopped_embedded_staging_is_started_again(tmp_path, run, staging, monkeypatch):
    import tools.wheelhouse.staged as staged
    from tools.staging import Staging

    path, _ = staged_vllm(tmp_path, staging)
    data = json.loads(path.read_text())
    with socket.socket() as s:  # a port nothing listens on: the registry is down
        s.bind(("127.0.0.1", 0))
        down = f"127.0.0.1:{s.getsockname()[1]}"
    data["staging"].update(registry=f"{down}/staging", embedded=True)
    path.write_text(json.dumps(data))
    # this environment's embedded staging is the descriptor's (its state dir's identity),
    # in a state dir of the test's own: the account's may not exist yet (a fresh machine)
    state = tmp_path / "staging-state"
    state.mkdir()
    (state / "instance").write_text((data["staging"].get("instance") or "fixture") + "\n")
    monkeypatch.setenv("ROCM_PYTORCH_STAGING_DIR", str(state))
    started = []

    def resolve(value):
        started.append(value)
        return Staging(staging.registry, True)  # where tools.staging started it

    monkeypatch.setattr(staged, "resolve", resolve)
    rc, stdout, err = run("--out", tmp_path / "wh", "--descriptor", path, "--target", "vllm-wheel")
    assert rc == 0, err
    assert started == [None]  # once per run
    assert "vllm-wheel (gfx950)" in stdout


def test_staging_that_does_not_answer_exits_1(tmp_path, run, staging):
    path, _ = staged_vllm(tmp_path, staging)
    staging.stop()
    argv = ["--out", tmp_path / "wh", "--descriptor", path, "--target", "vllm-wheel"]
    rc, _, err = run(*argv, "--retries", "0")
    assert rc == 1
    line = one_line_error(err)
    assert line.startswith(
        f"wheelhouse: error: reading vllm-wheel (gfx950) from staging {staging.registry}: "
    )


# -- --descriptor of something else ------------------------------------------------------


@pytest.mark.parametrize(
    "name,content,want",
    [
        (
            "vllm-wheel.gfx950.spec.json",
            {"target": "vllm-wheel", "arch": "gfx950", "tags": {"versioned": "v1"}},
            "vllm-wheel.gfx950.spec.json: not an image descriptor; pass the <name>.json an image"
            " target built (bazel-bin/.../<name>.json, not its .spec.json or .build.json)",
        ),
        (
            "old-metadata.json",  # what image rules wrote next to a layout
            {"target": "vllm-wheel", "arch": "gfx950", "digest": "sha256:1", "tags": {}},
            "old-metadata.json: not an image descriptor; pass the <name>.json",
        ),
        ("list.json", [1, 2], "list.json: not an image descriptor;"),
        ("notes.json", "{not json", "notes.json: not JSON ("),
        (
            "future.json",
            {"schema": 2, "staging": {}, "digest": "sha256:1"},
            "future.json: schema 2, want 1; rebuild the image",
        ),
    ],
)
def test_descriptor_of_something_else_is_a_clear_error(tmp_path, run, name, content, want):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    rc, _, err = run("--out", tmp_path / "wh", "--descriptor", path)
    assert rc == 2
    line = one_line_error(err)
    assert line.startswith(f"wheelhouse: error: --descriptor {path}: ")
    assert want in line


def test_descriptor_whose_manifest_was_edited_is_refused(tmp_path, run, staging):
    path, _ = staged_vllm(tmp_path, staging)
    data = json.loads(path.read_text())
    data["manifest"] = data["manifest"].replace("tar+gzip", "tar")
    path.write_text(json.dumps(data))
    rc, _, err = run("--out", tmp_path / "wh", "--descriptor", path)
    assert rc == 2
    assert one_line_error(err).startswith(
        f"wheelhouse: error: --descriptor {path}: manifest does not match its digest"
    )


def test_descriptor_of_a_layout_directory_is_a_clear_error(tmp_path, run):
    layout = tmp_path / "vllm-wheel.gfx950.layout"
    layout.mkdir()
    rc, _, err = run("--out", tmp_path / "wh", "--descriptor", layout)
    assert rc == 2
    assert one_line_error(err).startswith(
        f"wheelhouse: error: --descriptor {layout}: a directory, not an image descriptor;"
    )


@pytest.mark.parametrize(
    "argv,want",
    [
        (
            [],
            "no source given; pass --from-registry [HOST/NS], --from-staging DIR or"
            " --descriptor PATH",
        ),
        (
            ["--from-registry", "r:5000/ns", "--descriptor", "x.json"],
            "--from-registry and --from-staging/--descriptor both given; collect from one source",
        ),
        (
            ["--arch", "gfx951", "--descriptor", "x"],
            "--arch gfx951: unknown arch or family; did you mean 'gfx950'?",
        ),
        (
            ["--target", "pytorch", "--descriptor", "x"],
            "--target pytorch: not a wheel target; did you",
        ),
        (["--descriptor", "{tmp}/none.json"], "none.json: no such file; pass the <name>.json"),
        (["--from-staging", "{tmp}"], "no image descriptor (<name>.json) under"),
        (["--from-staging", "{tmp}/missing"], "missing: not a directory"),
        (
            ["--from-staging", "{tmp}", "--tag", "versioned"],
            "--tag and --set choose registry tags; drop them with --from-staging/--descriptor",
        ),
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


def test_refuses_to_write_into_a_directory_that_is_not_a_wheelhouse(tmp_path, run, staging):
    make_family(tmp_path / "outs", staging)
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "notes.txt").write_text("mine")
    rc, _, err = run("--out", tmp_path / "home", "--from-staging", tmp_path / "outs")
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
