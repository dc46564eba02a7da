"""Reference against the table the Starlark parser (reference.bzl) answers too; round trips."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tools.oci.errors import RegistryError
from tools.oci.reference import DOCKER_HUB, BadReference, Reference

TABLE = Path(__file__).with_name("references.bzl")
DIGEST = "sha256:" + "0123456789abcdef" * 4


def rows() -> list[tuple]:
    """REFERENCES of references.bzl (a Starlark file of literals)."""
    for node in ast.parse(TABLE.read_text()).body:
        if isinstance(node, ast.Assign) and node.targets[0].id == "REFERENCES":
            return ast.literal_eval(node.value)
    raise AssertionError(f"{TABLE}: no REFERENCES")


ROWS = rows()
VALID = [r for r in ROWS if r[2] is not None]


@pytest.mark.parametrize(("text", "default", "want", "written"), ROWS)
def test_parse_answers_as_the_table(text, default, want, written):
    try:
        r = Reference.parse(text, default_registry=default)
    except BadReference as e:
        assert want is None, f"{text!r} refused: {e}"
        assert "\n" not in str(e).strip("\n") or "\n" in text
        return
    assert want is not None, f"{text!r} taken as {r!r}"
    assert (r.registry, r.repository, r.tag, r.digest) == want


@pytest.mark.parametrize(("text", "default", "want", "written"), VALID)
def test_round_trip(text, default, want, written):
    r = Reference.parse(text, default_registry=default)
    assert str(r) == (written or text)
    assert Reference.parse(str(r)) == r
    assert Reference(*want) == r


def test_the_table_has_both_kinds_of_row():
    assert len(VALID) >= 20
    assert len(ROWS) - len(VALID) >= 30


def test_a_tag_and_a_digest_the_digest_is_asked_for():
    # verify.parse_ref read this as the repository `ns/repo:1.0` (issue 34)
    r = Reference.parse(f"reg.io/ns/repo:1.0@{DIGEST}")
    assert (r.registry, r.repository, r.tag, r.digest) == ("reg.io", "ns/repo", "1.0", DIGEST)
    assert r.identifier == DIGEST
    assert Reference.parse("reg.io/ns/repo:1.0").identifier == "1.0"
    assert Reference.parse("reg.io/ns/repo").identifier == "latest"


def test_helpers():
    r = Reference.at("https://reg.io:5000/team/ns", "pytorch", "v1")
    assert str(r) == "https://reg.io:5000/team/ns/pytorch:v1"
    assert r.context == "https://reg.io:5000/team/ns/pytorch"
    assert r.domain == "reg.io:5000"
    assert str(r.without_scheme()) == "reg.io:5000/team/ns/pytorch:v1"
    assert str(r.with_tag("latest")) == "https://reg.io:5000/team/ns/pytorch:latest"
    assert str(r.with_digest(DIGEST)) == f"https://reg.io:5000/team/ns/pytorch:v1@{DIGEST}"
    assert str(r.with_digest(DIGEST).with_tag("t")) == "https://reg.io:5000/team/ns/pytorch:t"
    assert str(Reference.at("reg.io", "x")) == "reg.io/x"


def test_no_registry_is_refused_unless_docker_hub_is_asked_for():
    with pytest.raises(BadReference) as e:
        Reference.parse("ubuntu:24.04")
    assert (
        str(e.value)
        == "image reference 'ubuntu:24.04': no registry; write HOST[:PORT]/ubuntu:24.04"
    )
    assert str(Reference.parse("ubuntu:24.04", default_registry=DOCKER_HUB)) == (
        "docker.io/library/ubuntu:24.04"
    )


def test_a_refusal_is_one_line_naming_the_text_and_the_fault():
    with pytest.raises(RegistryError) as e:
        Reference.parse("reg.io/ns/Repo:1.0")
    assert str(e.value).startswith(
        "image reference 'reg.io/ns/Repo:1.0': bad repository component 'Repo' (write 'repo');"
        " want [https://]HOST[:PORT]/REPOSITORY[:TAG]"
    )
    with pytest.raises(BadReference) as e:
        Reference.parse("reg.io/x@sha256:00")
    assert "bad digest 'sha256:00' (sha256 takes 64 lower-case hex digits)" in str(e.value)


def test_a_refused_field_is_named_once_whatever_quotes_the_text_takes():
    # repr() quotes a text with a single quote in double quotes: the field's fault is
    # carried as data, not recovered from the message by its quoting
    for text, fault in (
        ("reg.io/ns/repo:a'b", """bad tag "a'b" (word characters"""),
        ("reg.io/ns/it's", """bad repository component "it's" (lowercase letters"""),
    ):
        with pytest.raises(BadReference) as e:
            Reference.parse(text)
        assert str(e.value).startswith(f"image reference {text!r}: {fault}")
        assert str(e.value).count("image reference") == 1
        assert e.value.fault.startswith(fault)


def test_credentials_are_refused_and_not_shown():
    with pytest.raises(BadReference) as e:
        Reference.parse("alice:s3cret@reg.io/x:t")
    assert "s3cret" not in str(e.value)
    assert "credentials" in str(e.value)


def test_a_constructed_reference_is_checked_too():
    with pytest.raises(BadReference) as e:
        Reference("reg.io", "x", tag="a b")
    assert str(e.value).startswith("image reference 'reg.io/x:a b': bad tag 'a b'")
    with pytest.raises(BadReference):
        Reference("reg.io/ns", "x")
    with pytest.raises(BadReference):
        Reference("reg.io", "x", digest="md5")
