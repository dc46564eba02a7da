"""The registry grammar of the tools against the table the Starlark copy answers too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tools.oci.reference import BadRegistry, registry_string

TABLE = Path(__file__).with_name("registry_strings.bzl")


def rows() -> list[tuple[str, bool, bool]]:
    """REGISTRY_STRINGS of registry_strings.bzl (a Starlark file of literals)."""
    for node in ast.parse(TABLE.read_text()).body:
        if isinstance(node, ast.Assign) and node.targets[0].id == "REGISTRY_STRINGS":
            return ast.literal_eval(node.value)
    raise AssertionError(f"{TABLE}: no REGISTRY_STRINGS")


@pytest.mark.parametrize(("value", "namespace", "taken"), rows())
def test_the_python_grammar_answers_as_the_table(value, namespace, taken):
    try:
        registry_string(value, namespace=namespace)
        answer = True
    except BadRegistry:
        answer = False
    assert answer is taken, value


def test_a_taken_string_comes_back_with_a_lower_case_scheme():
    assert registry_string("https://Host.example:5000/a/b") == "https://Host.example:5000/a/b"
    assert registry_string("HTTP://Host.example:5000/a") == "http://Host.example:5000/a"
    assert registry_string("[::1]:5000/ns") == "[::1]:5000/ns"


def test_a_trailing_slash_is_refused_naming_the_value_and_the_fix():
    with pytest.raises(BadRegistry) as e:
        registry_string("127.0.0.1:5000/team/")
    assert str(e.value) == "'127.0.0.1:5000/team/' ends with '/'; write '127.0.0.1:5000/team'"
    with pytest.raises(BadRegistry) as e:
        registry_string("https://h:5000//")
    assert str(e.value) == "'https://h:5000//' ends with '/'; write 'https://h:5000'"


def test_blanks_around_a_registry_are_refused_naming_the_value_and_the_fix():
    with pytest.raises(BadRegistry) as e:
        registry_string(" host.example/ns ")
    assert str(e.value) == (
        "' host.example/ns ': blanks around the registry; write 'host.example/ns' (no blanks)"
    )
