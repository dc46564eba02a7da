"""Size budgets: the catalogue's `budget_mib` (and per-arch overrides) in each image's spec,
never in its build spec; `tagconf size` against a descriptor; one line when over."""

from __future__ import annotations

import json

import pytest

from tools.tagconf import budget

MiB = 1 << 20


def spec_of(run, *argv, catalog=None) -> dict:
    kwargs = {"catalog": catalog} if catalog else {}
    r = run("spec", *argv, **kwargs)
    assert r.code == 0, r.err
    return json.loads(r.out)


def descriptor(layers: list[int], config: int = 1000, digest: str = "sha256:" + "a" * 64) -> dict:
    manifest = {
        "schemaVersion": 2,
        "config": {"digest": "sha256:" + "c" * 64, "size": config},
        "layers": [{"digest": f"sha256:{i:064x}", "size": n} for i, n in enumerate(layers)],
    }
    return {"digest": digest, "manifest": json.dumps(manifest)}


def test_every_catalogue_target_has_a_budget(real_catalog, catalog):
    for cat in (real_catalog, catalog):
        missing = [t.name for t in cat.targets if t.budget_mib is None]
        assert missing == []


def test_the_spec_carries_the_budget_and_the_build_spec_does_not(run, tmp_path):
    build = tmp_path / "build.json"
    spec = spec_of(run, "--target", "pytorch", "--arch", "gfx950", "--build-output", str(build))
    assert spec["budget"] == {"mib": 24576, "from": "targets.pytorch.budget_mib"}
    assert "budget" not in json.loads(build.read_text())


def test_a_per_arch_budget_overrides_the_targets(run):
    family = spec_of(run, "--target", "rocm-runtime", "--arch", "gfx94X-gfx950-dcgpu")
    assert family["budget"] == {
        "mib": 10240,
        "from": "targets.rocm-runtime.budget_mib_by_arch.gfx94X-gfx950-dcgpu",
    }
    single = spec_of(run, "--target", "rocm-runtime", "--arch", "gfx942")
    assert single["budget"]["mib"] == 8192


def test_a_budgets_file_replaces_the_catalogues(run, tmp_path):
    path = tmp_path / "budgets.toml"
    path.write_text("[budget_mib]\nrocm-runtime = 0.5\n")
    spec = spec_of(run, "--target", "rocm-runtime", "--budgets", str(path))
    assert spec["budget"] == {"mib": 0.5, "from": f"{path} budget_mib.rocm-runtime"}
    other = spec_of(run, "--target", "pytorch-src", "--budgets", str(path))
    assert other["budget"]["from"] == "targets.pytorch-src.budget_mib"


@pytest.mark.parametrize(
    "old, new, fragment",
    [
        (
            "budget_mib = 2048",
            "budget_mib = -1",
            "targets.pytorch-src.budget_mib: must be a number of MiB > 0, got -1",
        ),
        (
            "budget_mib = 2048",
            'budget_mib = "2G"',
            "targets.pytorch-src.budget_mib: must be a number of MiB > 0, got '2G'",
        ),
        (
            "{ gfx94X-gfx950-dcgpu = 10240 }",
            "{ gfx951 = 10240, gfx94X-gfx950-dcgpu = 10240 }",
            "targets.rocm-runtime.budget_mib_by_arch.gfx951: rocm-runtime is not built for gfx951",
        ),
        (
            "budget_mib = 2048",
            "budget_mib = 2048\nbudget_mib_by_arch = { gfx950 = 1 }",
            "targets.pytorch-src.budget_mib_by_arch: an arch-free target has no archs",
        ),
        (
            "budget_mib = 1024\n",
            "budget_mib = 1024\nbudget_mib_by_arch = { gfx1100 = 9 }\n",
            "targets.aiter-wheel.budget_mib_by_arch.gfx1100: aiter-wheel is not built for gfx1100",
        ),
    ],
)
def test_bad_budgets_fail_in_one_line(run, mutated, old, new, fragment):
    r = run("targets", catalog=mutated(old, new))
    assert r.code == 2
    assert len(r.err.strip().splitlines()) == 1, r.err
    assert fragment in r.err


def test_size_within_budget_writes_the_record(run, tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps({"target": "vllm", "arch": "gfx950", "budget": {"mib": 1, "from": "x"}})
    )
    desc = tmp_path / "d.json"
    desc.write_text(json.dumps(descriptor([300_000, 400_000], config=2_000)))
    out = tmp_path / "size.json"
    r = run("size", "--spec", str(spec), "--descriptor", str(desc), "--output", str(out))
    assert r.code == 0, r.err
    record = json.loads(out.read_text())
    assert record["size"] == 702_000
    assert record["layers"] == 2
    assert record["budget_bytes"] == MiB
    assert record["budget_from"] == "x"


def test_size_over_budget_fails_naming_image_size_budget_and_excess(run, tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "target": "rocm-runtime",
                "arch": "gfx950",
                "budget": {"mib": 0.5, "from": "budgets.toml budget_mib.rocm-runtime"},
            }
        )
    )
    desc = tmp_path / "d.json"
    desc.write_text(json.dumps(descriptor([1_142_000], config=1_843)))
    out = tmp_path / "size.json"
    r = run(
        "size",
        "--spec",
        str(spec),
        "--descriptor",
        str(desc),
        "--output",
        str(out),
        "--label",
        "//tests/e2e:rocm-runtime.over_budget",
    )
    assert r.code == 2
    assert not out.exists()
    lines = r.err.strip().splitlines()
    assert lines == [
        "tagconf: error: image over budget: //tests/e2e:rocm-runtime.over_budget"
        " (rocm-runtime, gfx950) is 1.1 MiB (1,143,843 bytes), its budget 0.5 MiB"
        " (budgets.toml budget_mib.rocm-runtime): 0.6 MiB over;"
        " shrink the image or raise the budget in the catalogue"
    ]


def test_an_image_without_budget_passes_whatever_its_size(tmp_path):
    record = budget.check({"target": "x", "arch": None, "budget": None}, descriptor([10**12]), "x")
    assert record["budget_bytes"] is None
    assert record["size"] == 10**12 + 1000


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("[budget_mib]\nvllm = 0\n", "budget_mib.vllm: must be a number of MiB > 0, got 0"),
        ("vllm = 3\n", "want one [budget_mib] table"),
        ("[budget_mib\n", "cannot read budgets"),
    ],
)
def test_bad_budgets_files(tmp_path, text, fragment):
    path = tmp_path / "b.toml"
    path.write_text(text)
    with pytest.raises(budget.TagconfError) as e:
        budget.load_overrides(path)
    assert fragment in str(e.value)
