"""tagconf command line: tags, groups, group, spec, bake, check, generate.

Run as ``bazel run //tools/tagconf -- <command>`` or, from the repository
root, ``python3 -m tools.tagconf <command>``. User errors print one line
``tagconf: error: ...`` and exit 2; a stale targets.bzl makes ``check`` exit 1.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from tools import places
from tools.tagconf import bake as bake_mod
from tools.tagconf import budget, starlark, upstream_lock
from tools.tagconf import catalog as catalog_mod
from tools.tagconf.errors import TagconfError, UsageError
from tools.tagconf.model import Catalog, Target
from tools.tagconf.registry import check_registry
from tools.tagconf.spec import ARCH_BUILD_ARG, build_spec, image_spec
from tools.tagconf.tags import (
    KINDS,
    check_collisions,
    left_out,
    parse_assignment,
    render_many,
    resolve_values,
)

CATALOG = Path("images/catalog.toml")
TARGETS_BZL = Path("images/targets.bzl")


def _path(given: Path | None, default: Path) -> Path:
    """A path the user gave (relative to the cwd), else ``default`` in the workspace."""
    return given if given is not None else places.workspace() / default


def _display(path: Path) -> str:
    """``path`` relative to the source tree or the cwd, as a user wrote it."""
    for base in (places.workspace(), Path.cwd()):
        try:
            return str(path.absolute().relative_to(base.absolute()))
        except ValueError:
            continue
    return str(path)


def _update_command(catalog_path: Path) -> str:
    """The `bazel run` target that regenerates from this catalogue.

    By convention `update_targets` sits in the catalogue's package.
    """
    package = Path(_display(catalog_path)).parent.as_posix()
    return f"bazel run //{'' if package == '.' else package}:update_targets"


def _value_args(p: argparse.ArgumentParser) -> None:
    """--set and --vcs-ref: the values tags are rendered with."""
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a catalogue default, e.g. PYTORCH_VERSION=2.16.0",
    )
    p.add_argument("--vcs-ref", metavar="REF", help="git sha (7-40 lowercase hex): adds -g<REF>")


def _values(catalog: Catalog, args: argparse.Namespace, vcs_ref: str | None) -> dict[str, str]:
    overrides = dict(parse_assignment(a) for a in args.set)
    return resolve_values(catalog, overrides, vcs_ref)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tagconf",
        description="Validate the image catalogue and render its tags.",
    )
    parser.add_argument(
        "--catalog",
        type=Path,
        help=f"catalogue file (default: {CATALOG} in the source tree)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    tags = sub.add_parser(
        "tags",
        help="print repository:tag lines",
        description="Print one [registry/]repository:tag per line: targets in"
        " catalogue order, archs in the order given, an arch-free target once.",
    )
    tags.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="T",
        help="a target (repeatable; default: every target)",
    )
    tags.add_argument("--group", metavar="G", help="every target of group G")
    tags.add_argument(
        "--arch",
        metavar="A[,B...]|all",
        help="architectures or families (default: the catalogue default; 'all' = every"
        " known arch, no family)",
    )
    _value_args(tags)
    tags.add_argument(
        "--kind",
        choices=[*KINDS, "all"],
        default="all",
        help="which tags (default: all)",
    )
    tags.add_argument(
        "--registry",
        nargs="?",
        const="",
        metavar="R",
        help="prefix each line with R/ (no value: the catalogue's registry)",
    )
    tags.add_argument("--json", action="store_true", help="print JSON instead")

    sub.add_parser(
        "archs",
        help="list the GPU architectures (the default one marked) and the arch families",
        description="Print every architecture of the catalogue, one a line, the default"
        " marked `(default)`, then every arch family with its members; `--define arch=` and"
        " `--arch` take these, a comma list, or all (every architecture, no family).",
    )
    targets = sub.add_parser(
        "targets",
        help="list the targets: repository, arch or noarch, tag template, parents",
        description="Print one line per catalogue target: name, repository, arch|noarch,"
        " versioned tag template and parents (`?`: optional, left out on the archs it is"
        " not built for), in catalogue (publishing) order; `only:` names the archs of a"
        " target built for some archs only.",
    )
    targets.add_argument("--json", action="store_true", help="print JSON instead")
    sub.add_parser(
        "groups",
        help="list each group and its members",
        description="Print 'group: member member ...' for each group.",
    )
    group = sub.add_parser(
        "group",
        help="list one group's members",
        description="Print the members of one group, one a line, catalogue order.",
    )
    group.add_argument("name", help="group name (default, wheels, serving)")

    spec = sub.add_parser(
        "spec",
        help="write one image's build spec as JSON",
        description="Write the build and publish spec of one target and arch"
        " (tags, refs, build args, labels, cache ref) as JSON, and with --build-output"
        " the build spec alone (what shapes the image's bytes). The image rule runs"
        " this for every image it builds.",
    )
    spec.add_argument("--target", required=True, metavar="T", help="catalogue target")
    spec.add_argument("--arch", metavar="A", help="architecture (ignored for arch-free targets)")
    _value_args(spec)
    spec.add_argument(
        "--status-file",
        type=Path,
        metavar="FILE",
        help="Bazel stable-status.txt: its STABLE_VCS_REF is the VCS_REF unless --vcs-ref is given",
    )
    spec.add_argument("--registry", metavar="R", help="registry/namespace (default: catalogue's)")
    spec.add_argument(
        "--cache-registry",
        default="",
        metavar="R",
        help="registry/namespace of the BuildKit cache (default: no cache)",
    )
    spec.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an optional build arg of the Dockerfile, not a catalogue key (e.g."
        " UCX_REF=v1.20.0): in the build spec if the stage reads it; never in tags",
    )
    spec.add_argument("--output", type=Path, help="write here instead of stdout")
    spec.add_argument(
        "--build-output",
        type=Path,
        metavar="FILE",
        help="also write the build spec (content only: no registry, tags or VCS_REF) here",
    )
    spec.add_argument(
        "--upstream-lock",
        type=Path,
        metavar="FILE",
        help="images/upstream.lock: the digest the upstream tag is pinned to (in the spec of"
        " each image that starts FROM it, as upstream_digest)",
    )
    spec.add_argument(
        "--budgets",
        type=Path,
        metavar="FILE",
        help="size budgets in place of the catalogue's (`[budget_mib]` target = MiB): the"
        " fixture family's, tests/e2e/budgets.toml",
    )
    spec.add_argument(
        "--dockerfile",
        type=Path,
        metavar="PATH",
        help="the target's Dockerfile: the build spec keeps only the build args its stage reads,"
        " and holds the Dockerfile its build needs (`dockerfile_text`: the stages it reads,"
        " comments as empty lines)",
    )

    size = sub.add_parser(
        "size",
        help="check one built image against its size budget",
        description="Read a built image's descriptor (layer and config sizes) and its spec"
        " (the budget), write the size record as JSON, and fail in one line naming the"
        " image, its size, its budget and the excess when it is over. The image rule's"
        " ImageSize action runs this for every image it builds.",
    )
    size.add_argument("--spec", type=Path, required=True, help="the image's spec JSON")
    size.add_argument("--descriptor", type=Path, required=True, help="the image's descriptor")
    size.add_argument("--label", default="", help="the image's Bazel label, for the message")
    size.add_argument("--output", type=Path, required=True, help="the size record to write")

    bake = sub.add_parser(
        "bake",
        help="write the family as a docker buildx bake file (JSON)",
        description="Write a `docker buildx bake` file (JSON) for the targets and archs asked"
        " for, their parents included as targets and passed as `target:` contexts: what"
        " plain bake would build, for comparing (bench/) or migrating. The context is the"
        " repository root; run bake from there. No staging, content keys or reproducible"
        " export.",
    )
    bake.add_argument("--target", action="append", default=[], metavar="T", help="a target")
    bake.add_argument("--group", metavar="G", help="a group's members (default: every target)")
    bake.add_argument("--arch", metavar="A[,B]", help="archs, or `all` (default: the catalogue's)")
    _value_args(bake)
    bake.add_argument("--registry", metavar="R", help="registry/namespace of the tags")
    bake.add_argument(
        "--network", default="host", help="RUN steps' network: host (default), none or default"
    )
    bake.add_argument(
        "--secrets-dir",
        type=Path,
        metavar="DIR",
        help="every file in DIR is a build secret of that id (`python3 -m tools.mirrors render"
        " DIR` writes the mirror settings' ones)",
    )
    bake.add_argument(
        "--absent-dir",
        type=Path,
        metavar="DIR",
        help="where the NOT-BUILT contexts of optional parents an arch lacks are written"
        " (default: next to --output)",
    )
    bake.add_argument(
        "--upstream",
        default="",
        metavar="REF",
        help="an image that stands in for the catalogue's upstream image (a named context),"
        " or target:NAME",
    )
    bake.add_argument(
        "--dockerfile-dir",
        default="",
        metavar="DIR",
        help="take each Dockerfile's file name from DIR (e.g. tests/e2e/docker, the twins)",
    )
    bake.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an optional build arg of the Dockerfiles, not a catalogue key (as `spec --arg`,"
        " e.g. the rehearsal's TRITON_KERNELS_REF): given to every target, as bake's --set"
        " '*.args.NAME=VALUE'; a stage that declares no such ARG ignores it",
    )
    bake.add_argument("--output", type=Path, help="write here instead of stdout")

    for name, text in (
        ("check", "validate the catalogue and fail if targets.bzl is stale"),
        ("generate", "write targets.bzl from the catalogue"),
    ):
        cmd = sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        cmd.add_argument(
            "--output",
            type=Path,
            help=f"generated file (default: {TARGETS_BZL} in the source tree)",
        )
    return parser


def _load(args: argparse.Namespace) -> Catalog:
    return catalog_mod.load(_path(args.catalog, CATALOG))


def _archs(catalog: Catalog, spec: str | None) -> list[str]:
    """--arch A[,B...]: archs and families; `all` is every single arch (no family)."""
    if spec is None:
        return [catalog.default_arch]
    if spec == "all":
        return list(catalog.archs)
    archs = [a.strip() for a in spec.split(",")]
    if not all(archs):
        raise UsageError(f"--arch {spec}", "empty arch in list", "write --arch gfx950,gfx1201")
    return [catalog.check_arch(a) for a in dict.fromkeys(archs)]


def _names(catalog: Catalog, args: argparse.Namespace) -> list[str]:
    """The targets of --target and --group (catalogue names), else every target."""
    names = [catalog.target(t).name for t in args.target]
    if args.group:
        names += catalog.group(args.group)
    return names or list(catalog.target_names)


def _selected_archs(catalog: Catalog, args: argparse.Namespace) -> list[str]:
    """--arch, refused for a target asked for by name on an arch it is not built for."""
    archs = _archs(catalog, args.arch)
    if args.arch != "all":
        for name in args.target:
            for arch in archs:
                catalog.check_built(catalog.target(name), arch, f"--target {name}")
    return archs


def _note_left_out(catalog: Catalog, names: list[str], archs: list[str]) -> None:
    for reason in left_out(catalog, names, archs):
        sys.stderr.write(f"tagconf: note: {reason}; left out\n")


def _cmd_tags(args: argparse.Namespace, out) -> int:
    catalog = _load(args)
    names = _names(catalog, args)
    values = _values(catalog, args, args.vcs_ref)
    archs = _selected_archs(catalog, args)
    images = render_many(catalog, names, archs, values)
    _note_left_out(catalog, names, archs)
    check_collisions(images)
    registry = catalog.registry if args.registry == "" else (args.registry or "")
    if args.registry:
        registry = check_registry(args.registry)
    if args.json:
        json.dump([i.to_json(registry) for i in images], out, indent=2)
        out.write("\n")
    else:
        for image in images:
            for ref in image.refs(args.kind, registry):
                out.write(ref + "\n")
    return 0


def _status_vcs_ref(path: Path) -> str | None:
    """STABLE_VCS_REF from a Bazel workspace status file, if present and non-empty.

    A dirty checkout has no commit to name: its build would take the
    commit's immutable tag forever, so it is refused.
    """
    status = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition(" ")
        status[key] = value.strip()
    ref = status.get("STABLE_VCS_REF") or None
    if ref and status.get("STABLE_GIT_DIRTY") == "true":
        raise UsageError(
            f"STABLE_VCS_REF={ref}",
            "the checkout has uncommitted changes"
            + (f" ({status['STABLE_GIT_CHANGED']})" if status.get("STABLE_GIT_CHANGED") else "")
            + ", so its images are not that commit's",
            "commit or stash them for a release (--config=release), or pass"
            " --define VCS_REF=<sha> on purpose",
        )
    return ref


def _stage_reads(path: Path, target: Target, err):
    """(``reads`` for build_spec, ``view``): the build args stage ``target.stage`` of
    ``path`` reads, and the Dockerfile its build needs (``model.view``), given the
    build args.

    Also warns (on ``err``) when the stage is built FROM a stage of the same
    file that a parent's named context replaces: BuildKit then rewrites the
    parent's every layer on each build.
    """
    from tools.dockerfile import model  # only the image rule's spec action needs it

    try:
        dockerfile = model.parse(path)  # its bytes: lines end at \n only, as in BuildKit
        dockerfile.stage(target.stage)
    except (OSError, ValueError, KeyError) as e:
        raise UsageError(
            f"--dockerfile {path}", str(e).strip("'\""), "pass the target's Dockerfile"
        ) from None

    def reads(build_args: Mapping[str, str]) -> set[str]:
        found = model.replaced_base(dockerfile, target.stage, target.parents, build_args)
        if found:
            stage, name = found
            err.write(
                f"tagconf: warning: {path}: stage {stage.name} ({target.name}) is built FROM"
                f" stage {name}, which the parent image {name} replaces as a named context;"
                " BuildKit then rewrites every layer of that parent on each build. Give the"
                f" stage another name or move it to its own Dockerfile\n"
            )
        return model.build_arg_names(dockerfile, target.stage, target.parents, build_args)

    def view(build_args: Mapping[str, str]) -> str:
        return model.view(dockerfile, target.stage, target.parents, build_args)

    return reads, view


def _optional_args(catalog: Catalog, assignments: list[str]) -> dict[str, str]:
    """--arg NAME=VALUE: build args beyond the catalogue's keys (and the arch's)."""
    extra: dict[str, str] = {}
    for text in assignments:
        key, sep, value = text.partition("=")
        if not sep or not re.fullmatch(r"[A-Z][A-Z0-9_]*", key):
            raise UsageError(f"--arg {text}", "expected NAME=VALUE", "e.g. --arg UCX_REF=v1.20.0")
        if key in catalog.defaults or key == ARCH_BUILD_ARG:
            raise UsageError(
                f"--arg {text}",
                f"{key} is {'the arch' if key == ARCH_BUILD_ARG else 'a catalogue key'}",
                "pass it with --arch" if key == ARCH_BUILD_ARG else f"pass it with --set {text}",
            )
        extra[key] = value
    return extra


def _cmd_spec(args: argparse.Namespace, out) -> int:
    catalog = _load(args)
    target = catalog.target(args.target)
    vcs_ref = args.vcs_ref
    if vcs_ref is None and args.status_file:
        vcs_ref = _status_vcs_ref(args.status_file)
    values = _values(catalog, args, vcs_ref)
    arch = None
    if target.arch:
        arch = catalog.check_arch(args.arch or catalog.default_arch)
    registry = None if args.registry is None else check_registry(args.registry)
    cache = check_registry(args.cache_registry, "--cache-registry") if args.cache_registry else ""
    budgets = budget.load_overrides(args.budgets) if args.budgets else None
    locked = upstream_lock.load(args.upstream_lock) if args.upstream_lock else None
    data = image_spec(catalog, target, arch, values, registry, cache, budgets, locked)
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    if args.build_output:
        reads, view = (
            _stage_reads(args.dockerfile, target, sys.stderr) if args.dockerfile else (None, None)
        )
        extra = _optional_args(catalog, args.arg)
        build = build_spec(catalog, target, arch, values, cache, reads, extra, locked)
        if view:
            # What BuildKit gets as the Dockerfile (ImageBuild writes it into the context):
            # an edit it does not see leaves this file, so the image's build, as it was.
            build["dockerfile_text"] = view(build["build_args"])
        args.build_output.write_text(json.dumps(build, indent=2, sort_keys=True) + "\n")
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        out.write(text)
    return 0


def _cmd_bake(args: argparse.Namespace, out) -> int:
    catalog = _load(args)
    names = _names(catalog, args)
    archs = _selected_archs(catalog, args)
    _note_left_out(catalog, names, archs)
    registry = check_registry(args.registry) if args.registry else None
    secrets = None
    if args.secrets_dir is not None:
        if not args.secrets_dir.is_dir():
            raise UsageError(
                f"--secrets-dir {args.secrets_dir}",
                "not a directory",
                "write it with `python3 -m tools.mirrors render DIR`",
            )
        secrets = {f.name: f.absolute() for f in sorted(args.secrets_dir.iterdir()) if f.is_file()}
    absent_dir = args.absent_dir
    if absent_dir is None and args.output is not None:
        absent_dir = args.output.parent / f"{args.output.name}.absent"
    data, absent = bake_mod.bake_file(
        catalog,
        names,
        archs,
        _values(catalog, args, args.vcs_ref),
        registry=registry,
        network=args.network,
        secrets=secrets,
        absent_dir=absent_dir.absolute() if absent_dir else None,
        upstream=args.upstream,
        dockerfile_dir=args.dockerfile_dir,
        optional_args=_optional_args(catalog, args.arg),
    )
    for where, why in absent.items():
        where.mkdir(parents=True, exist_ok=True)
        (where / "NOT-BUILT").write_text(why + "\n", encoding="utf-8")
    text = json.dumps(data, indent=2) + "\n"
    if args.output:
        args.output.write_text(text, encoding="utf-8")
        n = len(data["target"])
        sys.stderr.write(f"tagconf: wrote {n} bake targets to {args.output}\n")
    else:
        out.write(text)
    return 0


def _cmd_archs(args: argparse.Namespace, out) -> int:
    catalog = _load(args)
    for arch in catalog.archs:
        out.write(f"{arch} (default)\n" if arch == catalog.default_arch else f"{arch}\n")
    for family, members in catalog.families.items():
        out.write(f"{family} (family: {', '.join(members)})\n")
    return 0


def _cmd_targets(args: argparse.Namespace, out) -> int:
    catalog = _load(args)
    rows = [
        {
            "name": t.name,
            "repository": t.repository,
            "arch": t.arch,
            "tag": t.tag,
            "parents": list(t.parents),
            "archs": list(catalog.target_archs(t)),
            "optional_parents": list(t.optional_parents),
        }
        for t in catalog.targets
    ]
    if args.json:
        json.dump(rows, out, indent=2)
        out.write("\n")
        return 0
    width = max(len(t.name) for t in catalog.targets)
    rwidth = max(len(t.repository) for t in catalog.targets)
    for r in rows:
        parents = (
            ", ".join(p + ("?" if p in r["optional_parents"] else "") for p in r["parents"]) or "-"
        )
        kind = "arch" if r["arch"] else "noarch"
        only = f"  only: {', '.join(r['archs'])}" if r["archs"] != list(catalog.archs) else ""
        if not r["arch"]:
            only = ""
        out.write(
            f"{r['name']:{width}}  {r['repository']:{rwidth}}  {kind:6}"
            f"  {r['tag']}  parents: {parents}{only}\n"
        )
    return 0


def _cmd_groups(args: argparse.Namespace, out) -> int:
    catalog = _load(args)
    for name in catalog.groups:
        out.write(f"{name}: {' '.join(catalog.group(name))}\n")
    return 0


def _cmd_group(args: argparse.Namespace, out) -> int:
    catalog = _load(args)
    if args.name == "all":
        raise UsageError(
            "group all",
            "there is no 'all' group",
            f"use one of: {', '.join(catalog.groups)}",
        )
    for name in catalog.group(args.name):
        out.write(name + "\n")
    return 0


def _generated(args: argparse.Namespace) -> tuple[Path, str, Path]:
    catalog_path = _path(args.catalog, CATALOG)
    output = _path(args.output, TARGETS_BZL)
    catalog = catalog_mod.load(catalog_path)
    text = starlark.render(catalog, _display(catalog_path), _update_command(catalog_path))
    return output, text, catalog_path


def _cmd_check(args: argparse.Namespace, out) -> int:
    output, want, catalog_path = _generated(args)
    have = output.read_text(encoding="utf-8") if output.exists() else ""
    if have == want:
        out.write(f"ok: {_display(output)} is up to date\n")
        return 0
    diff = difflib.unified_diff(
        have.splitlines(keepends=True),
        want.splitlines(keepends=True),
        f"{_display(output)} (checked in)",
        f"{_display(output)} (from the catalogue)",
    )
    sys.stderr.writelines(diff)
    sys.stderr.write(
        f"tagconf: error: {_display(output)} is stale; run: {_update_command(catalog_path)}\n"
    )
    return 1


def _cmd_size(args: argparse.Namespace, out) -> int:
    try:
        spec = json.loads(args.spec.read_text(encoding="utf-8"))
        descriptor = json.loads(args.descriptor.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise UsageError("size", f"cannot read the spec or descriptor ({e})") from None
    label = args.label or f"{spec['target']}.{spec.get('arch') or 'noarch'}"
    record = budget.check(spec, descriptor, label)
    args.output.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


def _cmd_generate(args: argparse.Namespace, out) -> int:
    output, text, _ = _generated(args)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    out.write(f"wrote {output}\n")
    return 0


COMMANDS = {
    "tags": _cmd_tags,
    "spec": _cmd_spec,
    "size": _cmd_size,
    "bake": _cmd_bake,
    "archs": _cmd_archs,
    "targets": _cmd_targets,
    "groups": _cmd_groups,
    "group": _cmd_group,
    "check": _cmd_check,
    "generate": _cmd_generate,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args, sys.stdout)
    except TagconfError as e:
        print(f"tagconf: error: {e}", file=sys.stderr)
        return 2
