"""docs/rehearsal.md "What the stand-ins link" is tools/imagecheck/needs.toml, row for row."""

from __future__ import annotations

from pathlib import Path

from tools.imagecheck import check

DOC = Path("docs/rehearsal.md")  # runfiles path


def doc_rows() -> set[tuple[str, str, str]]:
    text = DOC.read_text()
    table = text.split("<!-- needs.toml table: begin -->", 1)[1]
    table = table.split("<!-- needs.toml table: end -->", 1)[0]
    rows = set()
    for line in table.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.add((cells[0], cells[1], cells[2].split()[0] if cells[2] else ""))
    return rows


def needs_rows() -> set[tuple[str, str, str]]:
    rows = set()
    for package in check.load_needs()["package"]:
        if not package["needs"]:
            rows.add((package["name"], "none of its own", ""))
        for need in package["needs"]:
            rows.add((package["name"], f"lib{need['library']}", need["how"]))
    return rows


def test_the_table_on_the_page_is_needs_toml():
    assert doc_rows() == needs_rows()


def test_every_row_names_an_upstream_file_and_the_stand_ins_state():
    for package in check.load_needs()["package"]:
        for need in package["needs"]:
            assert "/" in need["source"].split(" ", 1)[0], need  # owner/repo first
            assert need["how"] in ("linked", "dlopen"), need
            assert (need["how"] == "dlopen") == bool(need.get("dlopen")), need
