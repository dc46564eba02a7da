"""A small reader of protobuf text format, enough for Bazel's ModuleInfo textproto.

Messages become dicts of lists (every field may repeat); scalars stay
strings (quoted strings unescaped) or the bare token (enums, numbers, bools).
"""

from __future__ import annotations

import ast
import re

_TOKEN = re.compile(
    r"""\s*(?:(?P<close>\})|(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*)?"""
    r"""(?:(?P<open>\{)|(?P<string>"(?:[^"\\]|\\.)*"(?:\s*"(?:[^"\\]|\\.)*")*)"""
    r"""|(?P<bare>[^\s{}"]+)))""",
    re.S,
)


class TextprotoError(ValueError):
    pass


def _unquote(text: str) -> str:
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', text)
    out = ""
    for part in parts:
        # protobuf escapes are a subset of Python's for what Bazel writes
        out += ast.literal_eval('"' + part.replace("\\'", "'") + '"')
    return out


def parse(text: str) -> dict[str, list]:
    """The top-level message of ``text``."""
    stack: list[dict[str, list]] = [{}]
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m:
            raise TextprotoError(f"cannot parse at offset {pos}: {text[pos : pos + 40]!r}")
        pos = m.end()
        if m.group("close"):
            if len(stack) == 1:
                raise TextprotoError(f"unbalanced '}}' at offset {m.start()}")
            stack.pop()
            continue
        name = m.group("name")
        if m.group("open"):
            child: dict[str, list] = {}
            stack[-1].setdefault(name, []).append(child)
            stack.append(child)
        elif m.group("string") is not None:
            stack[-1].setdefault(name, []).append(_unquote(m.group("string")))
        else:
            stack[-1].setdefault(name, []).append(m.group("bare"))
    if len(stack) != 1:
        raise TextprotoError("unterminated message")
    return stack[0]


def one(message: dict, field: str, default=""):
    """The single value of ``field`` (the last one, as protobuf does), or ``default``."""
    values = message.get(field)
    return values[-1] if values else default
