"""The tag rules: pure functions from catalogue + values to tags.

Per target and arch there are three kinds of tag:

- versioned: the catalogue's template, e.g. ``2.15.0-10.1.0-full-gfx950``;
- floating: ``latest`` for an arch-free target, ``latest-<arch>`` for an arch
  target, plus the target's ``floating_suffix`` (pytorch-test:
  ``latest-<arch>-test``). A plain ``latest`` on an arch target would be
  overwritten by whichever arch was pushed last;
- immutable: ``<versioned>-g<VCS_REF>``, only when VCS_REF is set.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from string import Template

from tools.oci.reference import Reference
from tools.tagconf.errors import CatalogError, UsageError, nearest
from tools.tagconf.model import ARCH_VAR, VCS_REF_KEY, Catalog, Target

# OCI distribution spec, "tag" production.
TAG_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
VCS_REF_RE = re.compile(r"[0-9a-f]{7,40}")
KINDS = ("versioned", "floating", "immutable")


@dataclass(frozen=True)
class ImageTags:
    """The tags of one target for one arch (arch is None for arch-free)."""

    target: str
    arch: str | None
    repository: str
    versioned: str
    floating: str
    immutable: str | None

    def tags(self, kind: str = "all") -> list[str]:
        """Tags of ``kind`` ("all" or one of KINDS), in KINDS order."""
        kinds = KINDS if kind == "all" else (kind,)
        return [t for k in kinds if (t := getattr(self, k)) is not None]

    def refs(self, kind: str = "all", registry: str = "") -> list[str]:
        """``registry/repository:tag`` (a Reference) for each tag of ``kind``; without a
        registry, ``repository:tag``: the name within the catalogue (collisions)."""
        if not registry:
            return [f"{self.repository}:{t}" for t in self.tags(kind)]
        return [str(Reference.at(registry, self.repository, t)) for t in self.tags(kind)]

    def to_json(self, registry: str = "") -> dict[str, object]:
        return {
            "target": self.target,
            "arch": self.arch,
            "repository": self.repository,
            "versioned": self.versioned,
            "floating": self.floating,
            "immutable": self.immutable,
            "refs": self.refs("all", registry),
        }


def check_vcs_ref(ref: str, where: str = "--vcs-ref") -> str:
    """Return ``ref`` if it is 7-40 lowercase hex, else raise."""
    if not VCS_REF_RE.fullmatch(ref):
        raise UsageError(
            where,
            f"bad VCS_REF {ref!r}",
            "give a 7-40 character lowercase hex git sha, e.g. $(git rev-parse --short HEAD)",
        )
    return ref


def resolve_values(
    catalog: Catalog,
    overrides: Mapping[str, str] | None = None,
    vcs_ref: str | None = None,
) -> dict[str, str]:
    """The catalogue defaults with ``overrides`` applied and checked.

    ``vcs_ref`` (if not None) wins over both. An empty VCS_REF means no
    immutable tag.
    """
    values = dict(catalog.defaults)
    for key, value in (overrides or {}).items():
        if key not in values:
            raise UsageError(f"--set {key}={value}", "unknown key", nearest(key, sorted(values)))
        values[key] = value
    if vcs_ref is not None:
        values[VCS_REF_KEY] = vcs_ref
    if values[VCS_REF_KEY]:
        check_vcs_ref(values[VCS_REF_KEY], f"VCS_REF={values[VCS_REF_KEY]}")
    return values


def parse_assignment(text: str) -> tuple[str, str]:
    """Split ``KEY=VALUE`` (the --set syntax)."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise UsageError(f"--set {text}", "expected KEY=VALUE", "e.g. --set PYTORCH_VERSION=2.16.0")
    return key, value


def _check_tag(tag: str, target: Target, values: Mapping[str, str]) -> str:
    if TAG_RE.fullmatch(tag):
        return tag
    used = sorted(set(Template(target.tag).get_identifiers()) - {ARCH_VAR})
    given = ", ".join(f"{k}={values[k]!r}" for k in used) or "no variables"
    raise UsageError(
        f"{target.name}",
        f"tag {tag!r} is not a valid OCI tag (from {given})",
        "tags match [A-Za-z0-9_][A-Za-z0-9._-]{0,127}: no '/', ':', '+' or spaces,"
        " at most 128 characters",
    )


def render_tags(
    catalog: Catalog, target: Target, arch: str | None, values: Mapping[str, str]
) -> ImageTags:
    """All tags of ``target`` for ``arch`` with resolved ``values``."""
    if target.arch:
        if arch is None:
            raise UsageError(target.name, "arch target needs an arch", "pass --arch")
        catalog.check_built(target, catalog.check_arch(arch), f"--arch {arch}")
    else:
        arch = None
    env = dict(values)
    if arch is not None:
        env[ARCH_VAR] = arch
    versioned = _check_tag(Template(target.tag).substitute(env), target, values)
    floating = "latest" + (f"-{arch}" if arch else "") + target.floating_suffix
    floating = _check_tag(floating, target, values)
    ref = values.get(VCS_REF_KEY, "")
    immutable = _check_tag(f"{versioned}-g{ref}", target, values) if ref else None
    return ImageTags(target.name, arch, target.repository, versioned, floating, immutable)


def render_many(
    catalog: Catalog,
    targets: Iterable[str],
    archs: Sequence[str],
    values: Mapping[str, str],
) -> list[ImageTags]:
    """Tags for ``targets`` (catalogue order) by ``archs`` (given order).

    An arch-free target appears once, whatever the number of archs; a target
    is left out for the archs it is not built for (see ``left_out``).
    """
    wanted = set(targets)
    out: list[ImageTags] = []
    for target in catalog.targets:
        if target.name not in wanted:
            continue
        for arch in archs if target.arch else [None]:
            if catalog.builds(target, arch):
                out.append(render_tags(catalog, target, arch, values))
    return out


def left_out(catalog: Catalog, targets: Iterable[str], archs: Sequence[str]) -> list[str]:
    """Why ``render_many`` leaves pairs of ``targets`` and ``archs`` out, one sentence a target."""
    wanted = set(targets)
    out = []
    for target in catalog.targets:
        missing = [a for a in archs if target.name in wanted and not catalog.builds(target, a)]
        if missing:
            out.append(catalog.not_built(target, missing))
    return out


def render_all(catalog: Catalog, values: Mapping[str, str]) -> list[ImageTags]:
    """Every target for every known arch and every family: all the tags there can be."""
    return render_many(catalog, catalog.target_names, catalog.variants, values)


def check_collisions(images: Iterable[ImageTags], where: str = "") -> None:
    """Raise if two different images would land on one ``repository:tag``.

    ``where`` (e.g. the catalogue's name) prefixes the error.
    """
    owner: dict[str, tuple[str, str | None]] = {}
    for image in images:
        for ref in image.refs():
            me = (image.target, image.arch)
            other = owner.setdefault(ref, me)
            if other != me:
                raise CatalogError(
                    f"{where}: {ref}" if where else ref,
                    f"tag collision between {other[0]} ({other[1] or 'no arch'})"
                    f" and {me[0]} ({me[1] or 'no arch'})",
                    "give one of them a distinct repository or tag template",
                )


@dataclass(frozen=True)
class ParsedTag:
    """What a published tag says about its image, parsed back by the tag rules."""

    target: str
    arch: str | None
    kind: str  # one of KINDS
    values: dict[str, str]


def _arch_regex(catalog: Catalog) -> str:
    # The catalogue's archs and families by name, longest first: a family's
    # name holds `-` (gfx110X-all), so a pattern would take `-test` too.
    names = sorted(catalog.variants, key=lambda v: (-len(v), v))
    return f"(?P<{ARCH_VAR}>{'|'.join(re.escape(n) for n in names)})"


def _template_regex(template: str, arch: str) -> str:
    out, pos = [], 0
    for m in re.finditer(r"\$\{(\w+)\}", template):
        out.append(re.escape(template[pos : m.start()]))
        name = m.group(1)
        out.append(arch if name == ARCH_VAR else f"(?P<{name}>[A-Za-z0-9_.-]+?)")
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return "".join(out)


def parse_tag(catalog: Catalog, repository: str, tag: str) -> ParsedTag | None:
    """The target, arch and kind of ``repository:tag``, or None if no rule made it.

    Works for any versions (not just the catalogue defaults): the versioned
    template is matched with each variable as a wildcard.
    """
    arch_regex = _arch_regex(catalog)
    for target in catalog.targets:
        if target.repository != repository:
            continue
        versioned = _template_regex(target.tag, arch_regex)
        arch_part = "-" + arch_regex if target.arch else ""
        floating = "latest" + arch_part + re.escape(target.floating_suffix)
        # Most specific first: "latest-gfx950" would also fit "${ROCM_VERSION}-${ARCH}".
        for kind, pattern in (
            ("floating", floating),
            ("immutable", versioned + r"-g(?P<VCS_REF>[0-9a-f]{7,40})"),
            ("versioned", versioned),
        ):
            m = re.fullmatch(pattern, tag)
            if not m:
                continue
            values = {k: v for k, v in m.groupdict().items() if v is not None}
            arch = values.pop(ARCH_VAR, None)
            if target.arch and not catalog.builds(target, arch):
                continue
            return ParsedTag(target.name, arch, kind, values)
    return None
