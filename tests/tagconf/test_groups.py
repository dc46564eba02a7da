"""The groups: the seed's group table (testdata/seed_groups.txt), and no `all`.

docs/catalogue.md "Targets and groups" says the same in words.
"""

from __future__ import annotations

from pathlib import Path

SEED = Path("tests/tagconf/testdata/seed_groups.txt")


def seed_groups() -> dict[str, list[str]]:
    rows = (line.split(": ", 1) for line in SEED.read_text().splitlines())
    return {name: members.split() for name, members in rows}


def test_groups_are_the_seed_table(real_run):
    result = real_run("groups")
    assert result.code == 0, result.err
    assert result.out == SEED.read_text()


def test_group_lists_its_members_one_a_line(real_run):
    for name, members in seed_groups().items():
        result = real_run("group", name)
        assert result.code == 0, result.err
        assert result.out.splitlines() == members


def test_group_all_does_not_exist(run):
    result = run("group", "all")
    assert result.code == 2
    assert "there is no 'all' group" in result.err
    assert "default, wheels, serving" in result.err
