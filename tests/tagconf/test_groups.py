"""Groups exactly as DESIGN.md says: default, wheels, serving; no `all`."""

from __future__ import annotations

DEFAULT = [
    "rocm-runtime",
    "pytorch-src",
    "pytorch-base",
    "pytorch",
    "pytorch-wheel",
    "triton-wheel",
    "aiter-wheel",
    "torchvision-wheel",
    "cupy-wheel",
    "nixl-wheel",
    "vllm",
    "vllm-wheel",
    "lmcache",
    "lmcache-wheel",
]
WHEELS = [
    "pytorch-wheel",
    "triton-wheel",
    "aiter-wheel",
    "torchvision-wheel",
    "cupy-wheel",
    "nixl-wheel",
    "vllm-wheel",
    "lmcache-wheel",
]
SERVING = [
    "torchvision-wheel",
    "cupy-wheel",
    "nixl-wheel",
    "vllm",
    "vllm-wheel",
    "lmcache",
    "lmcache-wheel",
]


def test_group_members_in_catalogue_order(run):
    for name, members in (("default", DEFAULT), ("wheels", WHEELS), ("serving", SERVING)):
        result = run("group", name)
        assert result.code == 0, result.err
        assert result.out.splitlines() == members


def test_groups_lists_exactly_three(run):
    out = run("groups").out.splitlines()
    assert out == [
        "default: " + " ".join(DEFAULT),
        "wheels: " + " ".join(WHEELS),
        "serving: " + " ".join(SERVING),
    ]


def test_pytorch_run_and_test_stay_outside_default(catalog):
    assert "pytorch-run" not in catalog.group("default")
    assert "pytorch-test" not in catalog.group("default")


def test_wheels_are_the_eight_wheel_targets(catalog):
    wheel_targets = [n for n in catalog.target_names if n.endswith("-wheel")]
    assert list(catalog.group("wheels")) == wheel_targets
    assert len(wheel_targets) == 8


def test_sixteen_targets_in_the_seed_order(catalog):
    assert list(catalog.target_names) == [
        "rocm-runtime",
        "pytorch-src",
        "pytorch-base",
        "pytorch",
        "pytorch-wheel",
        "pytorch-run",
        "pytorch-test",
        "triton-wheel",
        "aiter-wheel",
        "torchvision-wheel",
        "cupy-wheel",
        "nixl-wheel",
        "vllm",
        "vllm-wheel",
        "lmcache",
        "lmcache-wheel",
    ]
    assert [t.name for t in catalog.targets if not t.arch] == ["pytorch-src", "triton-wheel"]


def test_group_all_does_not_exist(run):
    result = run("group", "all")
    assert result.code == 2
    assert "there is no 'all' group" in result.err
    assert "default, wheels, serving" in result.err
