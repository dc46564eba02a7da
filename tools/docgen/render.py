"""Render a Starlark ModuleInfo (parsed textproto) as Markdown."""

from __future__ import annotations

from tools.docgen.textproto import one

_HIDDEN_ATTRS = {"name"}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _doc(text: str) -> str:
    return text.strip() + "\n\n" if text.strip() else ""


def _rule(rule: dict) -> str:
    name = one(rule, "rule_name")
    kind = "executable rule" if one(rule, "executable") == "true" else "rule"
    out = f"### `{name}` ({kind})\n\n" + _doc(one(rule, "doc_string"))
    rows = []
    for attr in rule.get("attribute", []):
        attr_name = one(attr, "name")
        if attr_name in _HIDDEN_ATTRS or attr_name.startswith("_"):
            continue
        required = "yes" if one(attr, "mandatory") == "true" else f"`{one(attr, 'default_value')}`"
        rows.append(
            f"| `{attr_name}` | {one(attr, 'type').lower()} | {required}"
            f" | {_cell(one(attr, 'doc_string'))} |"
        )
    if rows:
        out += "| attribute | type | required / default | |\n|---|---|---|---|\n"
        out += "\n".join(rows) + "\n\n"
    return out


def _provider(provider: dict) -> str:
    out = f"### `{one(provider, 'provider_name')}` (provider)\n\n" + _doc(
        one(provider, "doc_string")
    )
    rows = [
        f"| `{one(f, 'name')}` | {_cell(one(f, 'doc_string'))} |"
        for f in provider.get("field_info", [])
    ]
    if rows:
        out += "| field | |\n|---|---|\n" + "\n".join(rows) + "\n\n"
    return out


def _function(func: dict) -> str:
    name = one(func, "function_name")
    params = func.get("parameter", [])
    signature = ", ".join(one(p, "name") for p in params)
    out = f"### `{name}({signature})`\n\n" + _doc(one(func, "doc_string"))
    rows = []
    for p in params:
        required = "yes" if one(p, "mandatory") == "true" else f"`{one(p, 'default_value')}`"
        rows.append(f"| `{one(p, 'name')}` | {required} | {_cell(one(p, 'doc_string'))} |")
    if rows:
        out += "| parameter | required / default | |\n|---|---|---|\n" + "\n".join(rows) + "\n\n"
    returns = one(func, "return", {})
    if returns and one(returns, "doc_string"):
        out += f"Returns: {_cell(one(returns, 'doc_string'))}\n\n"
    return out


def render(module: dict, title: str, source: str, update: str) -> str:
    """Markdown for every rule, provider and macro of ``module``, in name order."""
    out = f"# {title}\n\n"
    out += f"<!-- Generated from the docstrings of {source}; do not edit. Run: {update} -->\n\n"
    out += _doc(one(module, "module_docstring"))
    sections = [
        ("Macros and functions", module.get("func_info", []), "function_name", _function),
        ("Rules", module.get("rule_info", []), "rule_name", _rule),
        ("Providers", module.get("provider_info", []), "provider_name", _provider),
    ]
    for heading, items, key, fn in sections:
        if items:
            out += f"## {heading}\n\n"
            for item in sorted(items, key=lambda i: one(i, key)):
                out += fn(item)
    return out.rstrip("\n") + "\n"
