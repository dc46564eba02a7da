"""Load images/catalog.toml into a validated Catalog.

Every problem is a CatalogError naming the file, the key, the bad value and
the fix, e.g. ``catalog.toml: targets.pytorch.parents: unknown 'pytorh'``.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from string import Template
from typing import Any

from tools.oci.reference import component_ok
from tools.tagconf.errors import CatalogError, UsageError, nearest
from tools.tagconf.model import ARCH_VAR, VCS_REF_KEY, Catalog, Target
from tools.tagconf.registry import check_registry
from tools.tagconf.tags import check_collisions, check_vcs_ref, render_all

_TARGET_FIELDS = {
    "name": str,
    "repository": str,
    "tag": str,
    "arch": bool,
    "dockerfile": str,
    "stage": str,
    "parents": list,
}
# A family's name stands where an arch's does in tags, Bazel target names and
# cache tags (`<stage>_<arch>`): no `_`, `,` or `;`.
_FAMILY_NAME = re.compile(r"[A-Za-z0-9]+(-[A-Za-z0-9]+)*")
# tools/oci/reference.py's _PATH_COMPONENT, as the error message shows it
_REPOSITORY_RULE = "[a-z0-9]+((.|_|__|-+)[a-z0-9]+)*"
_TARGET_OPTIONAL = {
    "floating_suffix": str,
    "archs": list,
    "optional_parents": list,
    "budget_mib": (int, float),
    "budget_mib_by_arch": dict,
}


def _toml_list(items: tuple[str, ...]) -> str:
    return "[" + ", ".join(f'"{i}"' for i in items) + "]"


def load(path: str | os.PathLike[str]) -> Catalog:
    """Read, parse and validate the catalogue at ``path``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise CatalogError(
            str(path), f"cannot read catalogue ({e.strerror})", "pass --catalog PATH"
        ) from None
    return parse(text, path.name)


def parse(text: str, where: str = "catalog.toml") -> Catalog:
    """Parse and validate catalogue text; ``where`` names it in errors."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise CatalogError(where, f"not valid TOML: {e}", "fix the syntax") from None
    v = _Validator(where)
    catalog = v.catalog(data)
    # Render every tag with the defaults: an invalid tag or a collision in the
    # catalogue itself is a catalogue error, not a surprise at push time.
    try:
        check_collisions(render_all(catalog, dict(catalog.defaults)), where)
    except UsageError as e:
        raise CatalogError(where, str(e), "fix the catalogue") from None
    return catalog


class _Validator:
    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, key: str, problem: str, fix: str) -> CatalogError:
        return CatalogError(f"{self.where}: {key}", problem, fix)

    def table(self, data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
        value = data.get(key)
        if value is None:
            raise self.fail(key, "missing table", f"add a [{key}] table")
        if not isinstance(value, dict):
            raise self.fail(key, f"must be a table, got {value!r}", f"write [{key}]")
        return value

    def repository(self, label: str, value: str) -> None:
        """Refuse a repository name outside the OCI grammar (every ref is REGISTRY/NAME:TAG)."""
        if all(component_ok(c) for c in value.split("/")):
            return
        rule = f"repository names are lower case: {_REPOSITORY_RULE}, components joined by /"
        lower = value.lower()
        if all(component_ok(c) for c in lower.split("/")):
            rule = f"write {lower!r} ({rule})"
        raise self.fail(label, f"{value!r} is not an OCI repository name", rule)

    def string(self, data: Mapping[str, Any], key: str, label: str) -> str:
        if key not in data:
            raise self.fail(label, "missing field", f'add {key} = "..."')
        value = data[key]
        if not isinstance(value, str):
            raise self.fail(label, f"must be a string, got {value!r}", "quote it")
        return value

    def catalog(self, data: Mapping[str, Any]) -> Catalog:
        known_top = {"registry", "source", "defaults", "archs", "families", "targets", "groups"}
        for key in data:
            if key not in known_top:
                raise self.fail(key, "unknown key", nearest(key, sorted(known_top)))
        registry = self.string(data, "registry", "registry")
        if not registry:
            raise self.fail("registry", "is empty", 'set registry = "host[:port]/path"')
        try:
            check_registry(registry, "registry")
        except UsageError as e:
            raise self.fail("registry", e.problem, e.fix) from None
        source = self.string(data, "source", "source") if "source" in data else ""
        defaults = self.defaults(self.table(data, "defaults"))
        for key in ("ROCM_VERSION", "UPSTREAM_IMAGE"):
            if key not in defaults:
                raise self.fail(
                    f"defaults.{key}",
                    "missing field",
                    "the upstream image is UPSTREAM_IMAGE:ROCM_VERSION",
                )
        archs, default_arch = self.archs(self.table(data, "archs"))
        families = self.families(data.get("families", {}), archs)
        targets = self.targets(data.get("targets"), defaults, archs)
        groups = self.groups(self.table(data, "groups"), [t.name for t in targets])
        catalog = Catalog(
            path=self.where,
            registry=registry,
            defaults=defaults,
            archs=archs,
            default_arch=default_arch,
            targets=targets,
            groups=groups,
            source=source,
            families=families,
        )
        for t in targets:
            built = (*catalog.target_archs(t), *catalog.target_families(t))
            for arch in t.budget_mib_by_arch:
                if arch not in built:
                    raise self.fail(
                        f"targets.{t.name}.budget_mib_by_arch.{arch}",
                        f"{t.name} is not built for {arch}",
                        nearest(arch, built),
                    )
        return catalog

    def defaults(self, table: Mapping[str, Any]) -> dict[str, str]:
        out: dict[str, str] = {}
        for key, value in table.items():
            label = f"defaults.{key}"
            if not key.isidentifier() or key.upper() != key:
                raise self.fail(label, "keys are UPPER_CASE names", "rename the key")
            if key == ARCH_VAR:
                raise self.fail(label, "ARCH is not a default", "set [archs] default instead")
            if not isinstance(value, str):
                raise self.fail(label, f"must be a string, got {value!r}", "quote it")
            out[key] = value
        if VCS_REF_KEY not in out:
            raise self.fail(f"defaults.{VCS_REF_KEY}", "missing field", f'add {VCS_REF_KEY} = ""')
        if out[VCS_REF_KEY]:
            check_vcs_ref(out[VCS_REF_KEY], f"{self.where}: defaults.{VCS_REF_KEY}")
        return out

    def archs(self, table: Mapping[str, Any]) -> tuple[tuple[str, ...], str]:
        known = table.get("known")
        if not isinstance(known, list) or not known:
            raise self.fail("archs.known", "missing or empty list", 'add known = ["gfx950", ...]')
        seen: set[str] = set()
        for arch in known:
            if not isinstance(arch, str) or not arch.startswith("gfx"):
                raise self.fail("archs.known", f"bad arch {arch!r}", "archs look like 'gfx950'")
            if not arch[3:].isalnum() or arch != arch.lower():
                raise self.fail("archs.known", f"bad arch {arch!r}", "lowercase, like 'gfx90a'")
            if arch in seen:
                raise self.fail("archs.known", f"duplicate {arch!r}", "list it once")
            seen.add(arch)
        default = self.string(table, "default", "archs.default")
        if default not in seen:
            raise self.fail("archs.default", f"unknown {default!r}", nearest(default, known))
        return tuple(known), default

    def families(self, table: Any, known: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
        """``[families]``: name = [member archs]; members in catalogue order."""
        if not isinstance(table, dict):
            raise self.fail("families", f"must be a table, got {table!r}", "write [families]")
        out: dict[str, tuple[str, ...]] = {}
        by_members: dict[tuple[str, ...], str] = {}
        for name, members in table.items():
            label = f"families.{name}"
            if name in known:
                raise self.fail(label, "a family is named like an arch", "rename the family")
            if name in ("all", "noarch") or not _FAMILY_NAME.fullmatch(name):
                raise self.fail(
                    label,
                    f"bad family name {name!r}",
                    "letters, digits and '-' (a tag part), like 'gfx110X-all'; not all or noarch",
                )
            if not isinstance(members, list) or len(members) < 2:
                raise self.fail(
                    label,
                    f"must list two archs or more, got {members!r}",
                    "a family of one arch is that arch's image: use the arch",
                )
            for arch in members:
                if arch not in known:
                    hint = nearest(str(arch), known).replace("known:", "known archs:", 1)
                    raise self.fail(label, f"unknown arch {arch!r}", hint)
            if len(set(members)) != len(members):
                raise self.fail(label, "lists an arch twice", "list it once")
            ordered = tuple(a for a in known if a in members)
            if ordered in by_members:
                raise self.fail(
                    label,
                    f"has the members of family '{by_members[ordered]}'",
                    "one family per set of archs (its images would be the same)",
                )
            by_members[ordered] = name
            out[name] = ordered
        return out

    def targets(
        self, rows: Any, defaults: Mapping[str, str], known_archs: tuple[str, ...]
    ) -> tuple[Target, ...]:
        if not isinstance(rows, list) or not rows:
            raise self.fail("targets", "missing", "add [[targets]] tables")
        variables = (set(defaults) - {VCS_REF_KEY}) | {ARCH_VAR}
        targets: list[Target] = []
        names: list[str] = []
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise self.fail(f"targets[{i}]", "must be a table", "use [[targets]]")
            name = row.get("name")
            label = f"targets.{name}" if isinstance(name, str) else f"targets[{i}]"
            for key in row:
                if key not in _TARGET_FIELDS and key not in _TARGET_OPTIONAL:
                    known = sorted([*_TARGET_FIELDS, *_TARGET_OPTIONAL])
                    raise self.fail(f"{label}.{key}", "unknown field", nearest(key, known))
            for key, kind in _TARGET_FIELDS.items():
                if key not in row:
                    raise self.fail(f"{label}.{key}", "missing field", f"add {key}")
                if not isinstance(row[key], kind):
                    raise self.fail(
                        f"{label}.{key}",
                        f"must be a {kind.__name__}, got {row[key]!r}",
                        "fix the value",
                    )
            self.repository(f"{label}.repository", row["repository"])
            if name in names:
                raise self.fail(label, "duplicate target", "give each target one row")
            names.append(name)
            self.template(f"{label}.tag", row["tag"], variables, row["arch"])
            suffix = row.get("floating_suffix", "")
            if not isinstance(suffix, str):
                raise self.fail(f"{label}.floating_suffix", "must be a string", "quote it")
            parents = row["parents"]
            if not all(isinstance(p, str) for p in parents):
                raise self.fail(f"{label}.parents", "must list target names", "quote them")
            if len(set(parents)) != len(parents):
                raise self.fail(f"{label}.parents", "lists a parent twice", "list it once")
            optional = row.get("optional_parents", [])
            if not isinstance(optional, list) or not all(isinstance(p, str) for p in optional):
                raise self.fail(f"{label}.optional_parents", "must list parents", "quote them")
            for p in optional:
                if p not in parents:
                    raise self.fail(
                        f"{label}.optional_parents",
                        f"'{p}' is not one of its parents",
                        f"list parents only ({', '.join(parents) or 'none'})",
                    )
            archs = self.target_arch_list(label, row, known_archs)
            budget, by_arch = self.budgets(label, row)
            targets.append(
                Target(
                    name=name,
                    repository=row["repository"],
                    tag=row["tag"],
                    arch=row["arch"],
                    dockerfile=row["dockerfile"],
                    stage=row["stage"],
                    parents=tuple(parents),
                    floating_suffix=suffix,
                    archs=archs,
                    optional_parents=tuple(optional),
                    budget_mib=budget,
                    budget_mib_by_arch=by_arch,
                )
            )
        by_name = {t.name: t for t in targets}
        for t in targets:
            for p in t.parents:
                if p not in by_name:
                    raise self.fail(
                        f"targets.{t.name}.parents",
                        f"unknown target '{p}'",
                        nearest(p, names),
                    )
                if by_name[p].arch and not t.arch:
                    raise self.fail(
                        f"targets.{t.name}.parents",
                        f"arch-free target has arch parent '{p}'",
                        "make the target arch = true or drop the parent",
                    )
                parent_archs = by_name[p].archs or known_archs
                if p in t.optional_parents and all(
                    a in parent_archs for a in (t.archs or known_archs)
                ):
                    raise self.fail(
                        f"targets.{t.name}.optional_parents",
                        f"'{p}' is built for every arch {t.name} is",
                        "drop it from optional_parents",
                    )
                missing = [a for a in (t.archs or known_archs) if a not in parent_archs]
                if by_name[p].arch and missing and p not in t.optional_parents:
                    raise self.fail(
                        f"targets.{t.name}.parents",
                        f"parent '{p}' is not built for {', '.join(missing)}",
                        f"add it to optional_parents (built without it there)"
                        f" or give {t.name} archs = {_toml_list(parent_archs)}",
                    )
        self.acyclic(by_name)
        return tuple(targets)

    def budget_value(self, key: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise self.fail(key, f"must be a number of MiB > 0, got {value!r}", "e.g. 4096")
        return value

    def budgets(self, label: str, row: Mapping[str, Any]) -> tuple[float | None, dict[str, float]]:
        """A target's ``budget_mib`` and ``budget_mib_by_arch`` (whose keys ``catalog``
        checks: archs and families the target is built for)."""
        budget = row.get("budget_mib")
        if budget is not None:
            budget = self.budget_value(f"{label}.budget_mib", budget)
        by_arch = row.get("budget_mib_by_arch", {})
        if not isinstance(by_arch, dict):
            raise self.fail(
                f"{label}.budget_mib_by_arch", "must be a table", "write { gfx90a = 12288 }"
            )
        if by_arch and not row["arch"]:
            raise self.fail(
                f"{label}.budget_mib_by_arch", "an arch-free target has no archs", "drop it"
            )
        out = {}
        for arch, value in by_arch.items():
            out[arch] = self.budget_value(f"{label}.budget_mib_by_arch.{arch}", value)
        return budget, out

    def target_arch_list(
        self, label: str, row: Mapping[str, Any], known: tuple[str, ...]
    ) -> tuple[str, ...]:
        """A target's ``archs``, in catalogue order; () when it has none (every arch)."""
        if "archs" not in row:
            return ()
        archs = row["archs"]
        if not row["arch"]:
            raise self.fail(f"{label}.archs", "an arch-free target has no archs", "drop archs")
        if not isinstance(archs, list) or not archs:
            raise self.fail(f"{label}.archs", "must be a non-empty list", "or drop it (every arch)")
        for arch in archs:
            if arch not in known:
                raise self.fail(
                    f"{label}.archs", f"unknown arch {arch!r}", nearest(str(arch), known)
                )
        if len(set(archs)) != len(archs):
            raise self.fail(f"{label}.archs", "lists an arch twice", "list it once")
        return tuple(a for a in known if a in archs)

    def template(self, label: str, tag: str, variables: set[str], arch: bool) -> None:
        template = Template(tag)
        if not template.is_valid():
            raise self.fail(label, f"malformed template {tag!r}", "write ${NAME}")
        used = template.get_identifiers()
        for var in used:
            if var not in variables:
                raise self.fail(
                    label,
                    f"template {tag!r} names unknown variable '{var}'",
                    nearest(var, sorted(variables)),
                )
        if arch and ARCH_VAR not in used:
            raise self.fail(
                label,
                f"arch target's template {tag!r} lacks ${{{ARCH_VAR}}}",
                "add -${ARCH}, or every arch would push the same tag",
            )
        if not arch and ARCH_VAR in used:
            raise self.fail(
                label,
                f"arch-free target's template {tag!r} uses ${{{ARCH_VAR}}}",
                "drop ${ARCH} or set arch = true",
            )

    def acyclic(self, by_name: Mapping[str, Target]) -> None:
        state: dict[str, int] = {}  # 1 = on the path, 2 = done

        def visit(name: str, path: list[str]) -> None:
            if state.get(name) == 2:
                return
            if state.get(name) == 1:
                cycle = " -> ".join([*path[path.index(name) :], name])
                raise self.fail(
                    f"targets.{name}.parents",
                    f"parent cycle {cycle}",
                    "remove one of these parents",
                )
            state[name] = 1
            for parent in by_name[name].parents:
                visit(parent, [*path, name])
            state[name] = 2

        for name in by_name:
            visit(name, [])

    def groups(self, table: Mapping[str, Any], names: list[str]) -> dict[str, tuple[str, ...]]:
        out: dict[str, tuple[str, ...]] = {}
        for group, members in table.items():
            label = f"groups.{group}"
            if group == "all":
                raise self.fail(
                    label,
                    "there is no 'all' group",
                    "name the targets a push should cover",
                )
            if not isinstance(members, list) or not members:
                raise self.fail(label, "must be a non-empty list", "list target names")
            for m in members:
                if m not in names:
                    raise self.fail(label, f"unknown target '{m}'", nearest(str(m), names))
            if len(set(members)) != len(members):
                raise self.fail(label, "lists a target twice", "list it once")
            out[group] = tuple(members)
        return out
