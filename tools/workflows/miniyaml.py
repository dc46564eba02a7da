"""The YAML the workflow files are written in, read with the standard library only.

The offline run (offline.py) runs on the host's python3, as a runner would:
under `bazel run` the host is not what a runner sees (Bazel here runs in the
tree tools/bootstrap.sh makes), and the host's python3 has no YAML library.
The workflow files are generated (render.py), so this reads the part of YAML
they use, and refuses the rest in one line naming the line:

- block mappings and sequences by indentation (`- key: value` items too);
- plain, 'single' and "double" quoted scalars; `true`/`false`, integers;
  `~`/`null`; comments (a line's, or after a value);
- flow sequences `[a, 'b c']` and the empty flow mapping `{}`;
- block scalars `|`, `|-`, `>` and `>-`.

//tests/workflows reads every file of .github/workflows with it and with
PyYAML and requires the same answer (`on` aside: YAML 1.1 makes it True).
"""

from __future__ import annotations

import re

_KEY = re.compile(r"""^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s'"#][^#]*?)\s*:(?:\s+|$)(.*)$""")


class YamlError(ValueError):
    """A line this reader does not take: its number and why."""


def _strip_comment(text: str) -> str:
    """`value # comment` -> `value`, quotes respected."""
    quote = None
    for i, c in enumerate(text):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].rstrip()
    return text.rstrip()


def _scalar(text: str, line: int):
    text = text.strip()
    if text.startswith('"'):
        if not text.endswith('"') or len(text) < 2:
            raise YamlError(f"line {line}: unterminated double-quoted string")
        body = text[1:-1]
        return re.sub(r'\\(["\\/nt])', lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), body)
    if text.startswith("'"):
        if not text.endswith("'") or len(text) < 2:
            raise YamlError(f"line {line}: unterminated single-quoted string")
        return text[1:-1].replace("''", "'")
    if text in ("true", "True"):
        return True
    if text in ("false", "False"):
        return False
    if text in ("", "~", "null"):
        return None
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    if text[0] in "&*!%@`|>{[" and text != "{}":
        raise YamlError(f"line {line}: {text[:20]!r} is YAML this reader does not take")
    return text


def _flow(text: str, line: int):
    text = text.strip()
    if text == "{}":
        return {}
    if text.startswith("["):
        if not text.endswith("]"):
            raise YamlError(f"line {line}: a flow sequence must end on its line")
        items, current, quote = [], "", None
        for c in text[1:-1]:
            if quote:
                current += c
                if c == quote:
                    quote = None
            elif c in "'\"":
                quote = c
                current += c
            elif c == ",":
                items.append(current)
                current = ""
            elif c in "[]{}":
                raise YamlError(f"line {line}: nested flow collections are not taken")
            else:
                current += c
        if current.strip():
            items.append(current)
        return [_scalar(item, line) for item in items]
    return _scalar(text, line)


class _Reader:
    def __init__(self, text: str) -> None:
        self.lines: list[tuple[int, int, str]] = []  # (line number, indent, text)
        self.raw = text.splitlines()
        for number, raw in enumerate(self.raw, 1):
            if "\t" in raw[: len(raw) - len(raw.lstrip())]:
                raise YamlError(f"line {number}: a tab in the indentation")
            content = raw.strip()
            if not content or content.startswith("#"):
                continue
            self.lines.append((number, len(raw) - len(raw.lstrip(" ")), raw.strip()))
        self.i = 0

    def peek(self):
        return self.lines[self.i] if self.i < len(self.lines) else None

    def block_scalar(self, style: str, number: int, parent_indent: int) -> str:
        """The lines of a `|`/`>` scalar after line `number`, by the raw text."""
        body: list[str] = []
        indent = None
        j = number  # raw index of the next line
        while j < len(self.raw):
            raw = self.raw[j]
            if raw.strip():
                here = len(raw) - len(raw.lstrip(" "))
                if here <= parent_indent:
                    break
                indent = here if indent is None else indent
                body.append(raw[indent:])
            else:
                body.append("")
            j += 1
        while self.i < len(self.lines) and self.lines[self.i][0] <= j:
            self.i += 1
        while body and body[-1] == "":
            body.pop()
        if style.startswith(">"):
            text, previous_blank = "", True
            for row in body:
                if row == "":
                    text += "\n"
                    previous_blank = True
                elif row.startswith(" "):
                    text += ("" if previous_blank else "\n") + row + "\n"
                    previous_blank = True
                else:
                    text += ("" if previous_blank else " ") + row
                    previous_blank = False
            text = text.rstrip("\n")
        else:
            text = "\n".join(body)
        return text if style.endswith("-") else text + "\n"

    def value(self, rest: str, number: int, indent: int):
        """The value after `key:` (or `- `): inline, a block scalar, or the block below."""
        rest = _strip_comment(rest)
        if rest in ("|", "|-", ">", ">-"):
            return self.block_scalar(rest, number, indent)
        if rest:
            return _flow(rest, number)
        nxt = self.peek()
        if nxt is None or nxt[1] < indent or (nxt[1] == indent and not nxt[2].startswith("- ")):
            return None
        return self.node(nxt[1])

    def node(self, indent: int):
        first = self.peek()
        if first[2] == "-" or first[2].startswith("- "):
            return self.sequence(indent)
        return self.mapping(indent)

    def mapping(self, indent: int, first: str | None = None, number: int = 0) -> dict:
        result: dict = {}
        while True:
            if first is None:
                line = self.peek()
                if line is None or line[1] < indent:
                    return result
                number, here, text = line
                if here != indent:
                    raise YamlError(f"line {number}: indented {here}, expected {indent}")
                if text.startswith("- "):
                    return result
                self.i += 1
            else:
                text, first = first, None
            match = _KEY.match(text)
            if not match:
                raise YamlError(f"line {number}: expected `key: value`, got {text[:40]!r}")
            key = _scalar(match[1], number)
            if key in result:
                raise YamlError(f"line {number}: {key!r} given twice")
            result[key] = self.value(match[2], number, indent)

    def sequence(self, indent: int) -> list:
        result: list = []
        while True:
            line = self.peek()
            if line is None or line[1] < indent:
                return result
            number, here, text = line
            if here != indent or not (text == "-" or text.startswith("- ")):
                return result
            self.i += 1
            item = text[1:].strip()
            if not item:
                result.append(self.value("", number, indent + 1))
            elif _KEY.match(item) and not item.startswith(("'", '"', "[")):
                # `- key: value` and the item's later keys, indented like `key`
                result.append(self.mapping(indent + 2, first=item, number=number))
            else:
                result.append(self.value(item, number, indent))


def loads(text: str):
    """The document `text` (one), as Python values."""
    reader = _Reader(text)
    if reader.peek() is None:
        return None
    value = reader.node(reader.peek()[1])
    if reader.peek() is not None:
        raise YamlError(f"line {reader.peek()[0]}: unexpected text after the document")
    return value
