"""The change's table against main's report, and the size gate."""

from __future__ import annotations

import copy
import json

import pytest

from tools.report import delta

MiB = 1 << 20


def _image(ident, size, layers=5, budget=None, seconds=10.0, hit=False, compiled=None):
    build = {"seconds": seconds, "staging_hit": hit}
    if compiled:
        build.update(compile_hits=compiled[0], compile_misses=compiled[1])
    return {
        "id": ident,
        "size": size,
        "layers": layers,
        "budget_bytes": budget,
        "build": build,
        "published": None,
    }


MAIN = {
    "images": [
        _image("rocm-runtime.gfx950", 1000 * MiB, budget=8192 * MiB),
        _image("pytorch.gfx950", 4000 * MiB, layers=9, budget=24576 * MiB, compiled=(0, 400)),
        _image("triton-wheel", 100 * MiB, budget=512 * MiB),
    ]
}


def _now(**changes):
    now = copy.deepcopy(MAIN)
    for image in now["images"]:
        for key, value in changes.get(image["id"], {}).items():
            image[key] = value
    return now


def test_unchanged_family_passes():
    table = delta.rows(_now(), MAIN)
    assert [r.growth for r in table] == [0, 0, 0]
    assert delta.failures(table) == []


@pytest.mark.parametrize(
    "ident, size, why",
    [
        ("triton-wheel", 106 * MiB, "6 % of a small image"),
        ("pytorch.gfx950", 4201 * MiB, "201 MiB of a big one (5.0 %)"),
    ],
)
def test_a_grown_image_fails_naming_its_growth_and_budget(ident, size, why):
    table = delta.rows(_now(**{ident: {"size": size}}), MAIN)
    (line,) = delta.failures(table)
    assert line.startswith(f"{ident} grew +"), why
    assert "past the gate of 5 % or 200 MiB" in line and "its budget" in line
    assert "raise its budget in images/catalog.toml in the same change" in line


def test_growth_under_both_limits_passes():
    table = delta.rows(_now(**{"pytorch.gfx950": {"size": 4199 * MiB}}), MAIN)
    assert delta.failures(table) == []


def test_a_raised_budget_lets_the_growth_pass():
    grown = {"size": 1500 * MiB, "budget_bytes": 9000 * MiB}
    table = delta.rows(_now(**{"rocm-runtime.gfx950": grown}), MAIN)
    assert delta.failures(table) == []
    row = table[0]
    assert row.budget_changed and row.growth == 500 * MiB
    text = delta.markdown(table, "main's")
    assert "| rocm-runtime.gfx950 | 1,500.0 MiB | +500.0 MiB (+50.0 %) |" in text
    assert "9,000.0 MiB (was 8,192.0 MiB)" in text


def test_a_new_image_has_nothing_to_grow_from():
    now = _now()
    now["images"].append(_image("vllm.gfx950", 9000 * MiB))
    table = delta.rows(now, MAIN)
    assert table[-1].before is None and delta.failures(table) == []
    assert "| vllm.gfx950 | 9,000.0 MiB | new |" in delta.markdown(table, "main's")


def test_the_table_has_layers_seconds_hits_and_compile_rate():
    now = _now(
        **{
            "pytorch.gfx950": {
                "layers": 10,
                "build": {
                    "seconds": 120.0,
                    "staging_hit": False,
                    "compile_hits": 399,
                    "compile_misses": 1,
                },
            }
        }
    )
    text = delta.markdown(delta.rows(now, MAIN), "main's")
    assert (
        "| pytorch.gfx950 | 4,000.0 MiB | ±0.0 KiB (+0.0 %) | 10 (was 9)"
        " | 120.0 s (was 10.0 s) | no | 99.8 % |" in text
    )


def test_without_a_baseline_sizes_compare_with_the_last_publish():
    now = _now()
    now["images"][0]["published"] = {"digest": "sha256:x", "size": 900 * MiB}
    table = delta.rows(now, None)
    assert table[0].before == 900 * MiB and table[0].too_big, "11 % past its last publish"
    assert table[1].before is None


def test_the_cli_writes_the_table_and_the_summary_and_exits_1(tmp_path, monkeypatch, capsys):
    (tmp_path / "main.json").write_text(json.dumps(MAIN))
    (tmp_path / "now.json").write_text(json.dumps(_now(**{"triton-wheel": {"size": 200 * MiB}})))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    code = delta.main(
        [
            "--report",
            str(tmp_path / "now.json"),
            "--baseline",
            str(tmp_path / "main.json"),
            "--out",
            str(tmp_path / "delta.md"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert out.splitlines()[-1] == "delta: 3 images, 1 past the size gate"
    assert "FAIL: triton-wheel grew +100.0 MiB (+100.0 %" in out
    assert (tmp_path / "delta.md").read_text() == (tmp_path / "summary.md").read_text()


def test_unreadable_input_is_one_line(tmp_path, capsys):
    (tmp_path / "x.json").write_text("{}")
    assert delta.main(["--report", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert (
        err == f"delta: error: --report {tmp_path}/x.json: no `images` list;"
        " give a report's --json output\n"
    )
