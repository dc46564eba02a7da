"""tools/envvars.py: a setting the user gave is used or refused in one line, never
read as the default (docs/building.md, "Client settings")."""

from __future__ import annotations

import pytest

from tools import envvars

NAME = "ROCM_PYTORCH_X"


@pytest.mark.parametrize(
    "text, want",
    [
        ("", True),  # unset or blank: the default
        ("  ", True),
        ("0", False),
        ("false", False),
        ("FALSE", False),
        (" Off ", False),
        ("no", False),
        ("1", True),
        ("True", True),
        ("yes", True),
        ("ON", True),
    ],
)
def test_a_switch_reads_every_spelling_of_on_and_off(text, want):
    assert envvars.switch(NAME, True, {NAME: text}) is want
    assert envvars.switch(NAME, False, {NAME: text}) is (want if text.strip() else False)


@pytest.mark.parametrize("text", ["maybe", "disable", "2", "o n", "-1"])
def test_a_switch_it_cannot_read_is_one_line_never_the_default(text):
    with pytest.raises(envvars.SettingError) as e:
        envvars.switch(NAME, True, {NAME: text})
    assert str(e.value) == (
        f"{NAME}={text!r} is neither on nor off; write 0 or 1 (or false/true, no/yes, off/on)"
    )


class ToolError(Exception):
    pass


def test_the_reader_raises_its_tool_s_error_when_asked():
    with pytest.raises(ToolError, match="is neither on nor off"):
        envvars.switch(NAME, True, {NAME: "maybe"}, error=ToolError)
    with pytest.raises(ToolError, match="is not a port number"):
        envvars.port(NAME, {NAME: "x"}, error=ToolError)
    with pytest.raises(ToolError, match="is not a number of seconds"):
        envvars.seconds(NAME, 1.0, {NAME: "x"}, error=ToolError)


@pytest.mark.parametrize("text, want", [("", None), (" ", None), ("1", 1), ("65535", 65535)])
def test_a_port(text, want):
    assert envvars.port(NAME, {NAME: text}) == want


@pytest.mark.parametrize("text", ["0", "65536", "99999", "abc", "-5", "5.5", "0x50", "²", "٥٤٨٠"])
def test_a_port_out_of_range_or_not_a_number_is_refused(text):
    with pytest.raises(envvars.SettingError) as e:
        envvars.port(NAME, {NAME: text})
    assert str(e.value) == f"{NAME}={text!r} is not a port number; set it to 1-65535"


@pytest.mark.parametrize("text, want", [("", 20.0), ("3", 3.0), ("0.5", 0.5), ("1e3", 1000.0)])
def test_seconds(text, want):
    assert envvars.seconds(NAME, 20.0, {NAME: text}) == want


@pytest.mark.parametrize("text", ["abc", "0", "-1", "nan", "inf", "-inf", "3s"])
def test_seconds_that_are_not_a_positive_number_are_refused(text):
    with pytest.raises(envvars.SettingError) as e:
        envvars.seconds(NAME, 20.0, {NAME: text})
    assert str(e.value) == f"{NAME}={text!r} is not a number of seconds; set it to a number > 0"


def test_a_setting_error_is_a_value_error():
    # the callers that turned a ValueError of tools/places.py into their own error still do
    assert issubclass(envvars.SettingError, ValueError)
