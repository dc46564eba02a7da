"""Pure parts of the push tool: plan order, dedupe, collisions, registry strings."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.oci.client import is_loopback
from tools.oci.errors import RegistryError
from tools.oci.reference import split_registry
from tools.registry.plan import (
    PlannedImage,
    check_collisions,
    dedupe,
    order_parents_first,
    plan_header,
)


def image(target, arch=None, parents=(), repository=None, tags=("v1", "latest")):
    return PlannedImage(
        target=target,
        arch=arch,
        registry="r.example/ns",
        repository=repository or target,
        tags=tuple(tags),
        immutable=None,
        descriptor=Path(f"{target}.json"),
        parents=tuple(parents),
    )


def test_parents_come_first_per_arch_and_order_is_otherwise_kept():
    plan = [
        image("pytorch", "gfx950", ["pytorch-base", "triton-wheel"]),
        image("pytorch", "gfx1201", ["pytorch-base", "triton-wheel"]),
        image("pytorch-base", "gfx950", ["rocm-runtime"]),
        image("rocm-runtime", "gfx950"),
        image("pytorch-base", "gfx1201", ["rocm-runtime"]),
        image("rocm-runtime", "gfx1201"),
        image("triton-wheel"),
    ]
    got = [(i.target, i.arch) for i in order_parents_first(plan)]
    assert sorted(got, key=str) == sorted(((i.target, i.arch) for i in plan), key=str)
    # every image after its parents: same-arch variants, or the arch-free one
    for n, (target, arch) in enumerate(got):
        for parent in next(i for i in plan if (i.target, i.arch) == (target, arch)).parents:
            at = [k for k, (t, a) in enumerate(got) if t == parent and a in (arch, None)]
            assert at and at[0] < n, (target, arch, parent)
    # a plan already in order stays as it is
    assert [(i.target, i.arch) for i in order_parents_first(order_parents_first(plan))] == got


def test_parents_outside_the_plan_do_not_block():
    got = order_parents_first([image("aiter-wheel", "gfx950", ["pytorch"])])
    assert [i.target for i in got] == ["aiter-wheel"]


def test_dedupe_keeps_the_first_of_a_shared_arch_free_image():
    plan = [image("triton-wheel"), image("pytorch", "gfx950"), image("triton-wheel")]
    assert [(i.target, i.arch) for i in dedupe(plan)] == [
        ("triton-wheel", None),
        ("pytorch", "gfx950"),
    ]


def test_two_images_on_one_ref_are_refused():
    with pytest.raises(RegistryError, match=r"both pytorch \(gfx950\) and pytorch-test \(gfx950\)"):
        check_collisions(
            [
                image("pytorch", "gfx950", repository="pytorch", tags=("latest-gfx950",)),
                image("pytorch-test", "gfx950", repository="pytorch", tags=("latest-gfx950",)),
            ]
        )


def test_name_joins_namespace_and_repository():
    assert image("pytorch-base", "gfx950", repository="base").name == "ns/base"
    assert image("x").refs == ["r.example/ns/x:v1", "r.example/ns/x:latest"]


@pytest.mark.parametrize(
    "registry,host,namespace",
    [
        ("127.0.0.1:5000/rocm-pytorch", "127.0.0.1:5000", "rocm-pytorch"),
        ("reg.example/a/b/", "reg.example", "a/b"),
        ("reg.example", "reg.example", ""),
        ("https://127.0.0.1:5000/ns", "https://127.0.0.1:5000", "ns"),
    ],
)
def test_split_registry(registry, host, namespace):
    assert split_registry(registry) == (host, namespace)


@pytest.mark.parametrize("bad", ["ftp://reg/ns", "https:///ns"])
def test_split_registry_rejects(bad):
    with pytest.raises(RegistryError):
        split_registry(bad)


@pytest.mark.parametrize(
    "host,loopback",
    [
        ("127.0.0.1:5000", True),
        ("127.1.2.3", True),
        ("localhost:5000", True),
        ("[::1]:5000", True),
        ("10.0.0.1:5000", False),
        ("reg.example:443", False),
    ],
)
def test_plain_http_only_for_loopback(host, loopback):
    assert is_loopback(host) is loopback


def test_user_paths_are_relative_to_where_bazel_run_was_typed(monkeypatch):
    from tools.registry.cli import user_path

    monkeypatch.setenv("BUILD_WORKING_DIRECTORY", "/home/me/src")
    assert user_path("ca.pem") == Path("/home/me/src/ca.pem")
    assert user_path("/etc/ca.pem") == Path("/etc/ca.pem")
    monkeypatch.delenv("BUILD_WORKING_DIRECTORY")
    assert user_path("ca.pem") == Path("ca.pem")


@pytest.mark.parametrize(
    "labels, images, want",
    [
        (
            ["//images:push_default"],
            [image("triton-wheel"), image("pytorch", "gfx950"), image("pytorch", "gfx1201")],
            "# //images:push_default for gfx950, gfx1201: 3 images, 6 tags -> r.example/ns",
        ),
        (
            [],
            [image("triton-wheel", tags=("v1",))],
            "# plan for noarch: 1 image, 1 tag -> r.example/ns",
        ),
    ],
)
def test_plan_header_counts_images_and_tags(labels, images, want):
    assert plan_header(labels, images) == want


DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(
    "ref,want",
    [
        # issue 34: the repository was `ns/repo:1.0`
        (f"reg.io/ns/repo:1.0@{DIGEST}", ("reg.io", "ns/repo", DIGEST)),
        (f"reg.io/ns/repo@{DIGEST}", ("reg.io", "ns/repo", DIGEST)),
        ("reg.io:5000/ns/repo:1.0", ("reg.io:5000", "ns/repo", "1.0")),
        ("reg.io/repo", ("reg.io", "repo", "latest")),
        ("https://127.0.0.1:5000/ns/x:t", ("https://127.0.0.1:5000", "ns/x", "t")),
    ],
)
def test_verify_parse_ref(ref, want):
    from tools.registry.verify import parse_ref

    assert parse_ref(ref) == want


@pytest.mark.parametrize("bad", ["repo:1.0", "reg.io/", "reg.io/Repo:1", "reg.io/x@sha256:00"])
def test_verify_parse_ref_refuses_in_one_line(bad):
    from tools.registry.verify import parse_ref

    with pytest.raises(RegistryError) as e:
        parse_ref(bad)
    assert str(e.value).startswith(f"image reference {bad!r}: ")
    assert "\n" not in str(e.value)


def test_verify_pins_a_ref_once():
    from tools.registry.verify import pinned

    assert pinned("reg.io/x:t", DIGEST) == f"reg.io/x:t@{DIGEST}"
    assert pinned(f"reg.io/x:t@{DIGEST}", DIGEST) == f"reg.io/x:t@{DIGEST}"
    assert pinned("reg.io/x:t", None) == "reg.io/x:t@-"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--timeout", "nan"], "argument --timeout: 'nan' is not a number of seconds > 0"),
        (["--timeout", "0"], "argument --timeout: '0' is not a number of seconds > 0"),
        (["--timeout", "inf"], "argument --timeout: 'inf' is not a number of seconds > 0"),
        (["--retries", "-3"], "argument --retries: '-3' is not a whole number >= 0"),
        (["--backoff", "-1"], "argument --backoff: '-1' is not a number of seconds >= 0"),
        (["--chunk-size", "0"], "argument --chunk-size: '0' is not a whole number >= 1"),
        (["--chunk-size", "-5"], "argument --chunk-size: '-5' is not a whole number >= 1"),
    ],
)
def test_a_request_limit_that_makes_no_sense_is_refused_before_any_request(argv, message, capsys):
    # `nan` passed the old `<= 0` check, `--chunk-size 0` made every PATCH empty
    from tools.registry import cli

    with pytest.raises(SystemExit) as e:
        cli.main(["tags", "--registry", "127.0.0.1:1/ns", *argv, "x"])
    assert e.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "name, extra",
    [("ROCM_PYTORCH_HISTORY_DIR", []), ("ROCM_PYTORCH_SBOM_CACHE", ["--attest"])],
)
def test_a_push_refuses_a_relative_history_or_sbom_dir_before_it_pushes(
    name, extra, monkeypatch, capsys, tmp_path
):
    # the history is written after the push and the SBOM cache read mid-push: refused
    # after the fact, a push that landed was reported failed, or stopped half done
    from tools.registry import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(name, "here")
    monkeypatch.setattr(cli, "_load_plans", lambda _args: [])

    def no_push(*_a, **_k):
        raise AssertionError("a push started")

    monkeypatch.setattr(cli.Pusher, "push", no_push)
    argv = ["push", "--plan", "p.json", "--registry", "127.0.0.1:1/ns", *extra]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"registry: error: {name}=here is not an absolute path (builds and `bazel run` each run"
        " in a directory of their own, so each would find another one); make it absolute or"
        " unset it"
    ]
    assert list(tmp_path.iterdir()) == []
