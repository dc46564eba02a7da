"""registry: push images from staging, materialize them, list tags, prune caches.

Run as `bazel run //tools/registry -- <command>`; push targets
(`bazel run //images:push_default`) run `push` with their plan (`--sign`
under `--config=release`), `.verify` targets `verify`, `.load` targets
`load`, `.layout` targets `layout`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from tools import client_env, envvars
from tools.oci.client import Limits, MiB, RegistryClient
from tools.oci.errors import NotFound, RegistryError, redact
from tools.oci.reference import Reference, split_registry
from tools.places import user_path, workspace
from tools.registry import deadline, floating, verify
from tools.registry.plan import (
    PlannedImage,
    left_out,
    load_plans,
    plan_header,
    plan_labels,
    planned_image,
)
from tools.registry.push import Pusher, PushOptions, PushResult, human
from tools.staging.clients import Clients

CATALOG = Path("images/catalog.toml")
TAG_FIELDS = ("tag", "digest", "target", "arch", "kind")
# `tags`: digests looked up unless --limit says otherwise, and HEADs at once
# (tools/registry/listing.py, imported by `tags` only: a push does not load tagconf)
DEFAULT_LIMIT = 1000
DEFAULT_JOBS = 8


PUSH_TIMEOUT = 3600.0  # `push --timeout`: the whole push's deadline, seconds


def _connection_args(
    p: argparse.ArgumentParser, whole_push: bool = False, uploads: bool = True
) -> None:
    """--insecure, --ca-file, --retries, --backoff, --timeout; --chunk-size with ``uploads``."""
    p.add_argument(
        "--insecure",
        action="store_true",
        help="plain HTTP to a non-loopback registry (loopback uses plain HTTP unless the"
        " registry is given as https://HOST)",
    )
    p.add_argument(
        "--ca-file", type=user_path, help="CA bundle that signs the registry's certificate"
    )
    p.add_argument("--retries", type=_count(0), default=5, help="retries per request (default 5)")
    p.add_argument(
        "--backoff",
        type=_seconds(0),
        default=0.5,
        help="first retry delay in seconds (doubles)",
    )
    if whole_push:
        p.add_argument(
            "--timeout",
            type=_seconds(),
            default=PUSH_TIMEOUT,
            metavar="SECONDS",
            help="the whole push's deadline: stop when it passes, whatever is in flight, and"
            f" say what was pushed (default {PUSH_TIMEOUT:g})",
        )
    else:
        p.add_argument(
            "--timeout",
            type=_seconds(),
            default=Limits.timeout,
            metavar="SECONDS",
            help=f"give up on a request{' (an upload: on a chunk)' if uploads else ''} still"
            f" failing or unanswered after SECONDS, its retries included"
            f" (default {Limits.timeout:g})",
        )
    if not uploads:
        return
    p.add_argument(
        "--chunk-size",
        type=_count(1),
        default=Limits.chunk_size // MiB,
        metavar="MIB",
        help="push blobs bigger than this in chunks of this size, each resumable"
        f" (default {Limits.chunk_size // MiB})",
    )


def _plan_args(p: argparse.ArgumentParser, required: bool = True) -> None:
    p.add_argument("--plan", type=Path, required=required, action="append", help="plan JSON")
    p.add_argument("--registry", help="[https://]HOST[:PORT][/NAMESPACE] instead of the plan's")


def _push_options(push: argparse.ArgumentParser) -> None:
    """The options of `push` a user passes after `--` (the launcher gives --plan)."""
    push.add_argument(
        "--dry-run",
        action="store_true",
        help="print what each ref would get and every refusal the push would make; write nothing",
    )
    push.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document at the end (progress stays on stderr): each ref with its"
        " digest and action (uploaded, mounted, up to date, or refused: not written, see"
        " error), and totals",
    )
    _jobs_arg(push)
    _connection_args(push, whole_push=True)
    verify.add_push_arguments(push)  # --attest, --sign, --key


def push_help(about: dict, catalog) -> str:
    """The help of one push target: usage, what it pushes where, the groups, the options."""
    label = about["label"]
    package = label.rpartition(":")[0]
    targets = about["targets"]
    registry = about.get("registry") or f"{catalog.registry} (the catalogue's registry)"
    groups = "\n".join(
        f"  {package}:push_{name:<10} {', '.join(members)}"
        for name, members in catalog.groups.items()
    )
    description = f"""\
{label} builds, then pushes {len(targets)} target{"s" * (len(targets) != 1)}: {", ".join(targets)}
{_archs_line(about, catalog)}
  registry: {registry}; publish elsewhere with --image_registry=HOST[:PORT]/NAMESPACE
            (or -- --registry HOST[:PORT]/NAMESPACE)
  first:    bazel run {label}.plan  (its tags; builds nothing)
            bazel run {label} -- --dry-run  (builds, asks the registry, writes nothing)

groups (there is no all group; one target: {package}:<target>.push):
{groups}"""
    parser = _help_parser(
        label, description, "[https://]HOST[:PORT][/NAMESPACE] instead of the plan's"
    )
    _push_options(parser)
    return parser.format_help()


def _help_parser(label: str, description: str, registry_help: str) -> argparse.ArgumentParser:
    """The parser a `.help` target prints: `bazel run LABEL` usage, -h and --registry."""
    parser = argparse.ArgumentParser(
        prog=f"bazel run {label} --",
        usage=f"bazel run {label} [--define arch=A[,B...]] [--image_registry=...] -- [options]",
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
    )
    parser.add_argument("-h", "--help", action="store_true", help="this help")
    parser.add_argument("--registry", help=registry_help)
    return parser


def _archs_line(about: dict, catalog) -> str:
    """The `archs:` line of a help: the archs of its --define, how to choose, the known ones."""
    arch = about.get("arch") or f"{catalog.default_arch} (the catalogue's default)"
    families = ""
    if catalog.families:
        families = (
            "\n            or an arch family, one image for all its members:"
            f" {', '.join(catalog.families)}"
        )
    return (
        f"  archs:    {arch}; choose with --define arch=A[,B...] or all"
        f" (known: {', '.join(catalog.archs)}){families}"
    )


def report_help(about: dict, catalog) -> str:
    """The help of the family report target: what it does, its --defines and its options."""
    label = about["label"]
    registry = about.get("registry") or f"{catalog.registry} (the catalogue's registry)"
    description = f"""\
{label}: the family report, one self-contained HTML page (inline CSS, SVG and
script; nothing fetched when it is opened); it prints the page's path.
{_archs_line(about, catalog)}
  registry: {registry}; the last publish is looked up there;
            another with --image_registry=HOST[:PORT]/NAMESPACE (or -- --registry ...)
  also:     any catalogue key, --define KEY=VALUE (e.g. --define PYTORCH_VERSION=2.16.0),
            and --config=rehearsal (the stand-in upstream), as for push_default

{REPORT_SHOWS}"""
    parser = _help_parser(
        label,
        description,
        "[https://]HOST[:PORT][/NAMESPACE]: ask this registry for the last publish instead",
    )
    _report_options(parser)
    return parser.format_help()


def cmd_about(args) -> int:
    try:
        about = json.loads(args.about.read_text())
        catalog = _catalog(Path(about["catalog"]))
        text = (report_help if about.get("command") == "report" else push_help)(about, catalog)
    except KeyError as e:
        raise RegistryError(
            f"{args.about}: not a .help target's file (no {e}); rebuild it"
        ) from None
    except (OSError, ValueError, TypeError, AttributeError) as e:
        raise RegistryError(f"{args.about}: not a .help target's file ({e}); rebuild it") from None
    sys.stdout.write(text)
    return 0


def _jobs_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--jobs", type=_count(1), default=4, help="blobs copied at once, per image (default 4)"
    )


def _image_args(p: argparse.ArgumentParser) -> None:
    """One image (--descriptor, --spec) or every image of --plan."""
    _plan_args(p, required=False)
    p.add_argument("--descriptor", type=user_path, help="one image's descriptor JSON")
    p.add_argument("--spec", type=user_path, help="its tagconf spec JSON (tags, refs)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="registry", description=__doc__.splitlines()[0])
    client_env.add_argument(parser)  # the ImageLayout action's: this build's staging
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    push = sub.add_parser(
        "push",
        help="push the images of a plan",
        description="Push every image of the plan: missing blobs, manifest by digest, then"
        " tags; parents first; immutable tags checked before anything is written.",
    )
    _plan_args(push)
    _push_options(push)

    about = sub.add_parser(
        "about",
        help="the help of a push target or of the report: options, targets, archs, registry",
        description="What `bazel run //images:push_default.help` prints: the push options,"
        " what the push target publishes, for which archs, where, and the catalogue's groups;"
        " for `//images:report.help` (a file whose command is report), the report's options"
        " and --defines. Reads the catalogue only: no image is built.",
    )
    about.add_argument("--about", type=Path, required=True, help="the .help target's JSON")

    layout = sub.add_parser(
        "layout",
        help="write images from staging as OCI image layouts",
        description="Stream the image of --descriptor (or every image of --plan, one"
        " subdirectory <target>.<arch> each) from the staging registry into an OCI image"
        " layout at --out, each blob checked against its digest. --out must be new or empty;"
        " it appears complete or not at all. With a spec, index.json names the versioned tag.",
    )
    _image_args(layout)
    layout.add_argument("--out", type=user_path, required=True, help="new or empty directory")
    _jobs_arg(layout)
    _connection_args(layout)

    load = sub.add_parser(
        "load",
        help="put images from staging into the local Docker engine under their refs",
        description="docker pull each image from the staging registry by digest, tag it with"
        " every ref of its spec (versioned, floating, immutable), and drop the staging name.",
    )
    _image_args(load)
    load.add_argument("--docker", default="docker", help="docker CLI (default: docker)")
    _connection_args(load)

    plan = sub.add_parser(
        "plan",
        help="print the refs a plan would push",
        description="Print each registry/repository:tag of the plan, parents first, on"
        " stdout; first a `# TARGET for ARCHS: N images, M tags -> REGISTRY` line on stderr."
        " Reads only tagconf's specs: no image is built.",
    )
    _plan_args(plan)
    plan.add_argument(
        "--json", action="store_true", help="one JSON document: target, arch, refs, immutable"
    )

    check = sub.add_parser(
        "check",
        help="check that the registry a push writes to answers and takes a write",
        description="For each registry host of the plan (or of the --spec files): GET /v2/,"
        " then per repository open an upload session and cancel it, as the push's first"
        " upload would; nothing is written. One line on stderr: what was checked, or the"
        " first failure and its fix. The push target's build runs it beside the image"
        " builds when --image_registry= is given (images/private/push.bzl).",
    )
    _plan_args(check, required=False)
    check.add_argument(
        "--spec", type=Path, action="append", default=[], help="a tagconf spec JSON (repeat)"
    )
    check.add_argument("--stamp", type=Path, help="a file to write when the check passes")
    _connection_args(check, uploads=False)

    key = sub.add_parser(
        "signing-key",
        help="check that the signing key opens, in one line",
        description="What --config=release runs before anything builds"
        " (tools/workspace_status_release.sh runs `python3 -m tools.registry.cli"
        " signing-key`): the key of --key, else $COSIGN_KEY, is opened"
        " as signing opens it (`cosign public-key`, $COSIGN_PASSWORD), so a release that"
        " would build for hours and then fail to sign stops at once. With no key set: one"
        " line saying the push needs one, exit 0 (the push may get `-- --key`), unless"
        " --require.",
    )
    key.add_argument("--key", help="a key file or KMS URI (default: $COSIGN_KEY)")
    key.add_argument("--require", action="store_true", help="no key set is an error too")

    tags = sub.add_parser(
        "tags",
        help="list a repository's tags with digest, target and arch",
        description="List the published tags of REPO (paginated), each with the target, arch"
        " and kind tagconf parses back from it, and the digest of the first --limit tags"
        " (a HEAD each, --jobs at once; a note on stderr says how many were not looked up)."
        " Progress goes to stderr.",
    )
    tags.add_argument(
        "repo", help="repository, e.g. rocm-pytorch/pytorch (the namespace may be left out)"
    )
    tags.add_argument(
        "--registry",
        help="[https://]HOST[:PORT][/NAMESPACE] (default: the catalogue's registry)",
    )
    tags.add_argument("--json", action="store_true", help="one JSON document")
    tags.add_argument(
        "--limit",
        type=_count(0),
        default=DEFAULT_LIMIT,
        metavar="N",
        help=f"look up the digests of the first N tags only (default {DEFAULT_LIMIT}; 0: all);"
        " the others are listed with digest - and a note says how many",
    )
    tags.add_argument(
        "--jobs",
        type=_count(1),
        default=DEFAULT_JOBS,
        metavar="N",
        help=f"digest look-ups (HEAD) at once (default {DEFAULT_JOBS})",
    )
    tags.add_argument("--catalog", type=user_path, help="catalogue (default: images/catalog.toml)")
    _connection_args(tags)

    pr = sub.add_parser(
        "prune-cache",
        help="delete old manifests from every *-cache repository",
        description="In every <namespace>/*-cache repository keep the newest N cache"
        " manifests of each <stage>_<arch> and delete the rest, registry-side.",
    )
    pr.add_argument("--registry", help="HOST[:PORT][/NAMESPACE] (default: the catalogue's)")
    pr.add_argument("--keep", type=int, default=2, help="manifests to keep per group (default 2)")
    pr.add_argument("--dry-run", action="store_true", help="print what would be deleted")
    pr.add_argument("--catalog", type=user_path, help="catalogue (default: images/catalog.toml)")
    _connection_args(pr)
    verify.add_parser(sub, _connection_args, user_path)
    floating.add_parser(sub, _plan_args, _connection_args)
    _report_parser(sub)
    return parser


# What the report shows: its help's and the .help target's (report_help).
REPORT_SHOWS = """\
It builds the family's images for those archs first (a staging hit each when
nothing changed; an image over its size budget fails the build, naming it), then
shows, per image: its size (compressed layers + config) against its budget
(images/catalog.toml budget_mib), the bytes and layers it shares with its parents,
what changed since the last publish of its tags (the registry's current manifest of
its versioned tag: digest then and now, size delta), the last run of its build
(seconds; staging hit or BuildKit build), the signatures, SBOMs and provenance
attached to the published digest, and its tags; the family as a graph (parents to
children), each image's size over the last publishes (the local publish history
`push` appends to) and the time per image. See docs/report.md."""

REPORT_HELP = f"""\
Write the family report: one self-contained HTML page (inline CSS, SVG and script;
nothing fetched when it is opened) and print its path.

  bazel run //images:report --define arch=gfx950[,gfx1201|gfx110X-all|all]
            [--image_registry=HOST[:PORT]/NAMESPACE] [-- OPTIONS]

{REPORT_SHOWS}"""


def _report_parser(sub) -> None:
    report = sub.add_parser(
        "report",
        help="write the family report (HTML) of a plan",
        description=REPORT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _plan_args(report)
    _report_options(report)
    report.add_argument(
        "--expect",
        choices=["signatures", "sboms", "provenances"],
        action="append",
        default=[],
        help="what the push attaches to each image, so a missing one shows red (the report"
        " target passes them: --sign all three, attest=1 sboms and provenances);"
        " without it a missing one is grey",
    )


def _report_options(report: argparse.ArgumentParser) -> None:
    """The options of `report` a user passes after `--` (the launcher gives --plan)."""
    report.add_argument(
        "--out",
        type=user_path,
        help="the HTML file to write (default: bazel-report/<target>-<archs>.html in the"
        " workspace)",
    )
    report.add_argument(
        "--offline",
        action="store_true",
        help="do not ask the registry: the last publish comes from the local publish history"
        " alone, and the signature/SBOM state is not shown",
    )
    report.add_argument(
        "--history",
        type=user_path,
        metavar="FILE",
        help="the publish history (default: $ROCM_PYTORCH_HISTORY_DIR/publish.jsonl, else"
        " ~/.cache/rocm-pytorch-images/history/publish.jsonl)",
    )
    report.add_argument(
        "--logs-root",
        type=user_path,
        metavar="DIR",
        help="the directory whose bazel-out/logs/ holds the image builds' records (default:"
        " the workspace of `bazel run`)",
    )
    report.add_argument("--title", help="the page's title (default: the report target's label)")
    report.add_argument(
        "--json", action="store_true", help="also print the report's data as JSON on stdout"
    )
    _connection_args(report, uploads=False)  # it uploads nothing: no --chunk-size


def cmd_report(args) -> int:
    from tools.registry import report
    from tools.report.render import render

    entries: list = []
    for path in args.plan:
        entries += report.read_plan(path, args.registry)
    labels = plan_labels(args.plan)
    for note in left_out(args.plan):
        print(f"registry: note: {note}; left out", file=sys.stderr)
    if not entries:
        raise RegistryError("report: the plan holds no image; ask for archs the family builds")
    records, where = report.load_history(args.history)
    archs = list(dict.fromkeys(e.image.arch for e in entries if e.image.arch)) or ["noarch"]
    clients = None if args.offline else _clients(args)
    try:
        model = report.collect(
            entries,
            logs_root=args.logs_root or report.logs_root(),
            records=records,
            ask=(lambda image: report.ask_registry(clients, image)) if clients else None,
            title=args.title or f"Family report: {', '.join(labels) or 'plan'}",
            archs=archs,
            history_note=report.history_note(where, records),
            expect=tuple(args.expect),
        )
    finally:
        if clients:
            clients.close()
    out = args.out or report.default_out(labels[0] if labels else "report", archs)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(model), encoding="utf-8")
    if args.json:
        print(json.dumps(model, indent=2))
    over = report.over_budget(model)
    changed = [
        i["id"]
        for i in model["images"]
        if i["published"] and i["published"].get("digest") not in (None, i["digest"])
    ]
    print(
        f"report: {len(model['images'])} images, {len(changed)} changed since the last"
        f" publish, {len(over)} over budget",
        file=sys.stderr,
    )
    print(out, file=sys.stderr if args.json else sys.stdout)
    if over:
        # the page first (it shows them, red), then the failure a build of them gives
        raise RegistryError(
            f"{len(over)} image{'s' if len(over) > 1 else ''} over budget: {', '.join(over)};"
            f" the report shows them ({out}); shrink them or raise their budgets in the"
            " catalogue"
        )
    return 0


def _count(least: int) -> Callable[[str], int]:
    """argparse type: a whole number >= ``least``."""

    def count(text: str) -> int:
        if not text.strip().isdigit() or int(text) < least:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= {least}")
        return int(text)

    return count


def _seconds(least: float | None = None) -> Callable[[str], float]:
    """argparse type: a finite number of seconds, >= ``least`` (None: > 0)."""

    def seconds(text: str) -> float:
        value = envvars.number_of_seconds(text, least)
        if value is None:
            bound = "> 0" if least is None else f">= {least:g}"
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds {bound}")
        return value

    return seconds


def _catalog(path: Path | None):
    if path is None:
        path = workspace() / CATALOG
    from tools.tagconf import catalog

    return catalog.load(path)


def _log(message: str) -> None:
    print(redact(message), file=sys.stderr, flush=True)


def _limits(args) -> Limits:
    """The limits of each request of the command: its --timeout and --chunk-size (a push
    has one deadline for the whole push instead, PushOptions.deadline: none per request)."""
    timeout = getattr(args, "timeout", Limits.timeout)
    return Limits(
        timeout=math.inf if args.command == "push" else timeout,
        chunk_size=getattr(args, "chunk_size", Limits.chunk_size // MiB) * MiB,
    )


def _clients(args) -> Clients:
    return Clients(
        insecure=args.insecure,
        ca_file=args.ca_file,
        retries=args.retries,
        backoff=args.backoff,
        limits=_limits(args),
        log=_log,
    )


def _client(args, host: str) -> RegistryClient:
    return _clients(args)(host)


def _load_plans(args) -> list[PlannedImage]:
    """The images of --plan; says on stderr which the plans leave out, and why.

    A plan that left out every image it asked for (`aiter-wheel.push` for an
    arch aiter is not built for) is refused: there is nothing to do.
    """
    notes = left_out(args.plan)
    images = load_plans(args.plan, args.registry)
    if notes and not images:
        raise RegistryError(f"{'; '.join(notes)}: nothing to {args.command}")
    for note in notes:
        print(f"registry: note: {note}; left out", file=sys.stderr)
    return images


def _images(args, need_spec: bool) -> list[PlannedImage | None]:
    """The images of --plan, or the one of --descriptor [--spec] (None without a spec)."""
    if bool(args.plan) == bool(args.descriptor):
        raise RegistryError(f"{args.command}: give --plan, or --descriptor (and --spec); not both")
    if args.plan:
        return _load_plans(args)
    if args.spec:
        return [planned_image(args.spec, args.descriptor, registry=args.registry)]
    if need_spec:
        raise RegistryError(
            f"{args.command} --descriptor {args.descriptor}: give --spec too (the refs to tag)"
        )
    return [None]


def _descriptor(args, image: PlannedImage | None):
    if image is not None:
        return image.load_descriptor()
    from tools.staging.descriptor import DescriptorError, load

    try:
        return load(args.descriptor)
    except DescriptorError as e:
        raise RegistryError(str(e)) from None


def cmd_layout(args) -> int:
    from tools.registry import materialize

    images = _images(args, need_spec=False)
    jobs = [
        (
            _descriptor(args, image),
            image.tags[0] if image else None,
            materialize.subdirectory(image) if args.plan else "",
        )
        for image in images
    ]
    clients = _clients(args)
    try:
        materialize.write_layouts(jobs, args.out, clients, args.jobs, _log)
    finally:
        clients.close()
    print(args.out)
    return 0


def cmd_load(args) -> int:
    from tools.registry import materialize

    images = [(image, _descriptor(args, image)) for image in _images(args, need_spec=True)]
    clients = _clients(args)
    try:
        for ref in materialize.load(images, clients, args.docker, _log):
            print(f"loaded {ref}", flush=True)
    finally:
        clients.close()
    return 0


def cmd_plan(args) -> int:
    images = _load_plans(args)
    # on stderr: stdout stays one ref a line (or the JSON document)
    print(plan_header(plan_labels(args.plan), images), file=sys.stderr, flush=True)
    for line in upstream_lines(images):
        print(line, file=sys.stderr, flush=True)
    if args.json:
        doc = [
            {
                "target": i.target,
                "arch": i.arch,
                "refs": i.refs,
                "immutable": str(i.ref(i.immutable)) if i.immutable else None,
            }
            for i in images
        ]
        print(json.dumps({"images": doc}, indent=2))
        return 0
    for image in images:
        for ref in image.refs:
            print(ref)
    return 0


def upstream_lines(images) -> list[str]:
    """`upstream: REF@DIGEST (images/upstream.lock)`, or that it is not locked: the image
    the family starts FROM, as the plan's specs name it."""
    seen: dict[str, str] = {}
    for image in images:
        try:
            spec = json.loads(image.spec.read_text()) if image.spec else {}
        except (OSError, ValueError):
            continue
        if spec.get("upstream"):
            seen.setdefault(spec["upstream"], spec.get("upstream_digest") or "")
    return [
        f"upstream: {ref}@{digest} (images/upstream.lock)"
        if digest
        else f"upstream: {ref}, not locked: the builds take what the tag names when they run"
        " (a release refuses; `bazel run //images:upstream_lock` locks it)"
        for ref, digest in seen.items()
    ]


def cmd_check(args) -> int:
    from tools.registry import preflight
    from tools.registry.plan import planned_image

    if bool(args.plan) == bool(args.spec):
        raise RegistryError("check: give --plan or --spec; not both")
    if args.plan:
        images = _load_plans(args)
    else:
        images = [planned_image(s, registry=args.registry) for s in args.spec]
    print(preflight.check(images, lambda host: _client(args, host)), file=sys.stderr)
    if args.stamp:
        args.stamp.write_text("checked\n")
    return 0


def cmd_signing_key(args) -> int:
    from tools.registry import sign

    if not args.key and not os.environ.get("COSIGN_KEY", "").strip():
        if args.require:
            raise RegistryError("a release signs, and no key is set: export COSIGN_KEY")
        print(
            "registry: note: a release signs, and this shell has no $COSIGN_KEY: give the push"
            " `-- --key FILE|KMS-URI` (checked only when it starts, after the build), or"
            " export COSIGN_KEY (and COSIGN_PASSWORD) to have it checked now",
            file=sys.stderr,
        )
        return 0
    sign.private_key_opens(args.key)
    where = f"--key {args.key}" if args.key else "$COSIGN_KEY"
    print(f"registry: the signing key ({where}) opens", file=sys.stderr)
    return 0


def cmd_push(args) -> int:
    if args.json and args.dry_run:
        raise RegistryError("push: --json and --dry-run do not go together; drop one")
    options = PushOptions(  # the push starts: its deadline with it
        insecure=args.insecure,
        ca_file=args.ca_file,
        retries=args.retries,
        backoff=args.backoff,
        dry_run=args.dry_run,
        jobs=args.jobs,
        limits=_limits(args),
        deadline=deadline.Deadline(args.timeout),
    )
    out = sys.stderr if args.json else sys.stdout  # --json: stdout holds the document alone
    settled: dict[str, str] = {}  # ref -> action, as each lands

    def on_ref(_image: PlannedImage, ref: str, action: str) -> None:
        settled[ref] = action
        print(f"{'up to date' if action == 'up to date' else 'pushed'} {ref}", file=out, flush=True)

    images = _load_plans(args)
    if not args.dry_run:  # where the push writes after it pushed: refused before it writes
        from tools.registry import history

        history.path()
    pusher = Pusher(options, on_ref=on_ref)
    attester = _attester(args, pusher)
    result, refusal, signum, late = PushResult(), "", 0, ""
    try:
        with deadline.interruptible(options.deadline):
            if args.dry_run:
                return _dry_run(pusher, images)
            result = pusher.push(images)
    except deadline.Interrupted as e:
        signum = e.signum
    except deadline.OutOfTime:
        late = deadline.out_of_time(options.deadline)
        if args.dry_run:
            print(f"registry: error: {late}; dry run, nothing written", file=sys.stderr)
            sys.stderr.flush()
            os._exit(1)
    except RegistryError as e:  # refused before writing, or staging lost content
        if not args.json:
            raise
        refusal = str(e)
    finally:
        if not (signum or late):  # uploads in flight keep their connections: leave them
            pusher.close()
        if attester and attester.signer:
            attester.signer.close()
    if not (signum or late or refusal):
        _remember(images, settled, bool(args.attest or args.sign), bool(args.sign))
    maybe = ""  # the tag whose PUT was in flight when the push stopped, landed or not
    unconfirmed = ""  # the immutable tag it wrote and had not confirmed when it stopped
    if pusher.tag_in_flight and (signum or late):
        image, ref, tag, action = pusher.tag_in_flight
        # after a signal: ask whether it landed; at the deadline there is no time to ask
        if not (signum and deadline.landed(image, tag, options.insecure, options.ca_file)):
            maybe = ref
        elif tag == image.immutable:  # landed, but only its confirmation makes it this push's
            unconfirmed = ref
        else:
            on_ref(image, ref, action)
    elif pusher.unconfirmed and (signum or late):
        unconfirmed = pusher.unconfirmed[1]
    if unconfirmed:
        pusher.not_confirmed[unconfirmed] = None
    error = refusal or late or result.error
    if signum:
        error = f"interrupted by {signal.Signals(signum).name}"
    if args.json:
        print(json.dumps(_push_document(images, pusher, settled, error), indent=2), flush=True)
    if refusal:  # one line, as without --json
        print(f"registry: error: {refusal}", file=sys.stderr)
        return 1
    if signum:
        print(
            f"registry: {error}: stopped; blob uploads in flight abandoned,"
            " no tag written after it",
            file=sys.stderr,
        )
    elif late:
        print(f"registry: error: {late}", file=sys.stderr)
    elif result.failed:
        print(
            f"registry: error: push of {result.failed.label()} failed: {result.error}",
            file=sys.stderr,
        )
    if error:
        _push_progress(images, settled)
    if maybe:
        print(f"  in flight when it stopped (may have landed): {maybe}", file=sys.stderr)
    if unconfirmed:
        print(
            f"  written, not confirmed when it stopped: {unconfirmed} (an immutable tag is"
            " confirmed by a read after the window; re-run the same command to confirm it)",
            file=sys.stderr,
        )
    print(_push_summary(images, settled, pusher), file=sys.stderr, flush=True)
    if attester:
        n = attester.counts
        print(
            f"attestations: {n.sboms} SBOMs and {n.provenances} provenances attached"
            f" ({n.layers_read} layers read), {n.signatures} signatures made,"
            f" {n.up_to_date} images already complete",
            file=sys.stderr,
            flush=True,
        )
    if signum or late:  # exit now: do not wait for the threads of the abandoned uploads
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(128 + signum if signum else 1)
    return 1 if error else 0


def _remember(images: list[PlannedImage], settled: dict[str, str], attested: bool, signed: bool):
    """Append each image whose tags all landed to the local publish history
    (tools/registry/history.py), which `bazel run //images:report` reads."""
    from tools.registry import history

    push_id = history.now_id()
    records = []
    for image in images:
        action = _done(image, settled)
        if not action:
            continue
        d = image.load_descriptor()
        layers = d.layers
        records.append(
            history.record(
                push_id=push_id,
                registry=image.registry,
                repository=image.repository,
                target=image.target,
                arch=image.arch,
                tags=image.tags,
                digest=d.digest,
                size=sum(x.size for x in layers) + d.config_blob.size,
                layers=len(layers),
                action=action,
                attested=attested,
                signed=signed,
            )
        )
    if records:
        try:
            where = history.append(records)
        except (OSError, envvars.SettingError) as e:  # the push is done: say so, do not fail it
            print(f"registry: note: publish history not written ({e})", file=sys.stderr)
            return
        print(f"publish history: {len(records)} images recorded in {where}", file=sys.stderr)


def _attester(args, pusher: Pusher):
    """The SBOM/provenance/signature step of --attest and --sign, hooked before the tags."""
    if not (args.attest or args.sign) or args.dry_run:
        return None
    from tools.registry import sbom
    from tools.registry.attest import Attester
    from tools.registry.sign import Signer

    sbom.cache_dir()  # its layer cache, read mid-push: a setting it cannot use is refused now
    signer = None
    if args.sign:
        signer = Signer(args.key, insecure=args.insecure, ca_file=args.ca_file, log=_log)
    attester = Attester(pusher.client, signer, log=_log)
    pusher.before_tags = attester.attach
    return attester


def _dry_run(pusher: Pusher, images: list[PlannedImage]) -> int:
    """What the push would do, after the registry check (it answers, TLS, credentials
    for a write: an upload session opened and cancelled per repository, nothing kept),
    asked with the push's options."""
    from tools.registry import preflight

    try:
        print(preflight.check(images, pusher.new_client), file=sys.stderr)
    except RegistryError as e:
        print(f"registry: error: {e}", file=sys.stderr)
        print(
            f"dry run: {len(images)} images, nothing written; the push would fail", file=sys.stderr
        )
        return 1
    try:
        lines, refusals = pusher.dry_run(images)
    except deadline.Interrupted as e:
        print("registry: dry run interrupted; nothing written", file=sys.stderr)
        return 128 + e.signum
    for line in lines:
        print(line)
    for refusal in refusals:
        print(f"registry: error: {refusal}", file=sys.stderr)
    refused = "; the push would be refused (above)" if refusals else ""
    print(f"dry run: {len(images)} images, nothing written{refused}", file=sys.stderr)
    return 1 if refusals else 0


def _done(image: PlannedImage, settled: dict[str, str]) -> str:
    """Whether every ref of ``image`` is on its digest: "pushed", "up to date" or ""."""
    actions = [settled.get(ref) for ref in image.refs]
    if None in actions:
        return ""
    return "up to date" if set(actions) == {"up to date"} else "pushed"


def _push_progress(images: list[PlannedImage], settled: dict[str, str]) -> None:
    """Which images a failed or interrupted push did and did not push, on stderr."""
    done = {i.label(): _done(i, settled) for i in images}
    pushed = [label for label, d in done.items() if d == "pushed"]
    current = [label for label, d in done.items() if d == "up to date"]
    rest = [label for label, d in done.items() if not d]  # its landed refs: `pushed` lines
    print(f"  pushed: {', '.join(pushed) or 'nothing'}", file=sys.stderr)
    if current:
        print(f"  up to date: {', '.join(current)}", file=sys.stderr)
    print(f"  not pushed: {', '.join(rest)}", file=sys.stderr)
    print(
        "  no tag points at a missing manifest; re-run the same command to finish",
        file=sys.stderr,
    )


def _push_totals(images: list[PlannedImage], settled: dict[str, str], pusher: Pusher) -> dict:
    stats = [c.stats for c in pusher.clients.values()]
    written = sum(action != "up to date" for action in settled.values())
    return {
        "images": len(images),
        "images_pushed": sum(_done(i, settled) == "pushed" for i in images),
        "images_up_to_date": sum(_done(i, settled) == "up to date" for i in images),
        "refs_written": written,
        "refs_up_to_date": len(settled) - written,
        # immutable tags written, then not confirmed (lost, late, or stopped before)
        "refs_not_confirmed": len(pusher.not_confirmed),
        "refs_refused": sum(len(i.refs) for i in images) - len(settled) - len(pusher.not_confirmed),
        "uploaded_blobs": sum(s.uploaded_blobs for s in stats),
        "uploaded_bytes": sum(s.uploaded_bytes for s in stats),
        "mounted_blobs": sum(s.mounted_blobs for s in stats),
        "requests": sum(s.requests for s in stats),
        "retries": sum(s.retries for s in stats),
    }


def _push_summary(images: list[PlannedImage], settled: dict[str, str], pusher: Pusher) -> str:
    t = _push_totals(images, settled, pusher)
    return (
        f"{t['images_pushed']}/{t['images']} images pushed, {t['images_up_to_date']} up to date;"
        f" {t['refs_written']} refs written, {t['refs_up_to_date']} up to date;"
        f" uploaded {t['uploaded_blobs']} blobs ({human(t['uploaded_bytes'])}),"
        f" mounted {t['mounted_blobs']}, {t['requests']} requests, {t['retries']} retries"
    )


def _push_document(
    images: list[PlannedImage], pusher: Pusher, settled: dict[str, str], error: str
) -> dict:
    """`push --json`: every ref of the plan with its digest and what happened to it."""
    refs = []
    for image in images:
        try:
            digest = image.load_descriptor().digest
        except RegistryError:
            digest = None
        for ref in image.refs:
            action = settled.get(ref) or (
                "not confirmed" if ref in pusher.not_confirmed else "refused"
            )
            refs.append({"ref": ref, "digest": digest, "action": action})
    totals = _push_totals(images, settled, pusher)
    return {"ok": not error, "error": error or None, "refs": refs, "totals": totals}


def cmd_tags(args) -> int:
    from tools.registry import listing

    catalog = _catalog(args.catalog)
    host, namespace = split_registry(args.registry or catalog.registry)
    name = args.repo.strip("/")
    if namespace and not name.startswith(namespace + "/"):
        name = f"{namespace}/{name}"
    client = _client(args, host)
    try:
        found = listing.tag_rows(client, name, catalog, limit=args.limit, jobs=args.jobs, say=_log)
    except NotFound as e:
        raise RegistryError(
            f"{e}; check the repository and --registry [https://]HOST[:PORT][/NAMESPACE]"
        ) from None
    finally:
        client.close()
    rows = found.rows
    if args.json:
        tags = [dict(zip(TAG_FIELDS, row, strict=True)) for row in rows]
        for t in tags:
            if t["digest"] == listing.NOT_LOOKED_UP:
                t["digest"] = None
        document = {"registry": host, "repository": name, "tags": tags}
        print(json.dumps({**document, "not_looked_up": found.not_looked_up}, indent=2))
        return 0
    if not rows:
        print(f"{host}/{name}: no tags", file=sys.stderr)
    print("\n".join("\t".join(row) for row in rows), end="\n" if rows else "")
    return 0


def cmd_prune(args) -> int:
    from tools.registry import prune

    if args.keep < 1:
        raise RegistryError(f"--keep {args.keep}: keep at least 1 (the cache being used)")
    catalog = _catalog(args.catalog)
    host, namespace = split_registry(args.registry or catalog.registry)
    client = _client(args, host)
    try:
        tags = prune.cache_tags(client, namespace)
        doomed = prune.select_deletions(tags, args.keep)
        deleted: set[tuple[str, str]] = set()
        for t in doomed:
            verb = "would delete" if args.dry_run else "deleted"
            if not args.dry_run and (t.repository, t.digest) not in deleted:
                client.delete_manifest(t.repository, t.digest)
                deleted.add((t.repository, t.digest))
            ref = Reference(host, t.repository, t.tag)
            print(f"{verb} {ref} {t.digest} (created {t.created or '?'})")
    finally:
        client.close()
    repos = len({t.repository for t in tags})
    print(
        f"{len(doomed)} of {len(tags)} cache manifests in {repos} repositories"
        f" {'would be ' if args.dry_run else ''}deleted; kept the newest {args.keep} per group",
        file=sys.stderr,
    )
    return 0


COMMANDS = {
    "push": cmd_push,
    "report": cmd_report,
    "about": cmd_about,
    "plan": cmd_plan,
    "check": cmd_check,
    "signing-key": cmd_signing_key,
    "layout": cmd_layout,
    "load": cmd_load,
    "tags": cmd_tags,
    "prune-cache": cmd_prune,
    "verify": lambda args: verify.cmd_verify(args, _clients, _log),
    "floating": lambda args: floating.cmd_floating(args, _clients, _log),
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        client_env.apply(args.client_settings)  # in the ImageLayout action: not in its key
        if getattr(args, "registry", None) is not None:
            if "@" in args.registry:  # credentials: refused, never printed, `docker login`
                split_registry(args.registry)
            # then the grammar `--image_registry=` is held to (tagconf)
            from tools.tagconf.registry import check_registry

            args.registry = check_registry(args.registry)
        return COMMANDS[args.command](args)
    except (RegistryError, client_env.ClientSettingsError, envvars.SettingError) as e:
        print(f"registry: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # tagconf errors on a bad catalogue
        from tools.tagconf.errors import TagconfError

        if isinstance(e, TagconfError):
            print(f"registry: error: {e}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
