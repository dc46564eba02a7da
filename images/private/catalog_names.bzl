"""The arch and family names of the catalogue's text: what images/targets.bzl must have.

images/targets.bzl is generated from images/catalog.toml and checked in, so
a catalogue edit without `bazel run //images:update_targets` leaves it
behind. The repository rule of client_settings.bzl reads the catalogue (by
label: Bazel re-runs it when the file changes, and only then) and writes
these names to `@rocm_pytorch_client//:catalog_names.bzl`; //images:defines
compares them with targets.bzl's when `--define arch=` names no arch it
knows, to say "regenerate targets.bzl" rather than "did you mean".

Only the two tables are read, in the form the catalogue and tagconf's docs
write them (`[archs]` with `known = [...]`, one line or several, and
`[families]` with one `NAME = [...]` each); anything else in those tables,
or no `known`, gives an error instead of names, and the messages then fall
back to naming the command. tagconf stays the catalogue's reader: these
names serve one error message.
"""

_NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"

def _strip_comment(line):
    """`line` without its `# comment` (a `#` inside a "string" stays)."""
    quoted = False
    for i in range(len(line)):
        c = line[i]
        if c == "\"":
            quoted = not quoted
        elif c == "#" and not quoted:
            return line[:i]
    return line

def _name(text):
    """A bare or "quoted" key or string, or None when it is no arch-like name."""
    text = text.strip()
    if len(text) >= 2 and text[0] == "\"" and text[-1] == "\"":
        text = text[1:-1]
    if not text or not all([c in _NAME_CHARS for c in text.elems()]):
        return None
    return text

def _strings(array):
    """The names of a `["a", "b",]` array, or None."""
    array = array.strip()
    if not array.startswith("[") or not array.endswith("]"):
        return None
    names = []
    for item in array[1:-1].split(","):
        if not item.strip():
            continue
        name = _name(item)
        if name == None or not item.strip().startswith("\""):
            return None
        names.append(name)
    return names

def catalog_names(text):
    """The archs (`[archs] known`) and family names (`[families]` keys) of a catalogue's text.

    Args:
      text: str, the catalogue TOML.

    Returns:
      struct(archs = list[str], families = list[str], error = str or None):
      with an error, both lists are empty.
    """
    table = None
    archs = None
    families = []
    key = None  # the key whose array spans lines
    value = ""
    for number, raw in enumerate(text.split("\n")):
        line = _strip_comment(raw).strip()
        if key != None:
            value += " " + line
            if "]" not in line:
                continue
            line = ""
        elif not line:
            continue
        elif line.startswith("["):
            table = line.replace(" ", "")
            continue
        elif table in ["[archs]", "[families]"]:
            left, eq, value = line.partition("=")
            key = _name(left)
            if not eq or key == None:
                return _refused("line %d: %r in %s" % (number + 1, raw.strip(), table))
            if "[" in value and "]" not in value:
                continue
        else:
            continue
        names = _strings(value)
        if table == "[archs]" and key == "known":
            if names == None:
                return _refused("[archs] known is no list of names")
            archs = names
        elif table == "[families]":
            if names == None:
                return _refused("[families] %s is no list of names" % key)
            families.append(key)
        key = None
    if key != None:
        return _refused("%s: unterminated list" % key)
    if not archs:
        return _refused("no [archs] known")
    return struct(archs = archs, families = families, error = None)

def _refused(why):
    return struct(archs = [], families = [], error = why)
