"""registry: push images from staging, materialize them, list tags, prune caches.

Run as `bazel run //tools/registry -- <command>`; push targets
(`bazel run //images:push_default`) run `push` with their plan, `.load`
targets `load`, `.layout` targets `layout`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tools.registry import listing, materialize, prune
from tools.registry.client import RegistryClient, split_registry
from tools.registry.errors import RegistryError
from tools.registry.plan import PlannedImage, load_plans, planned_image
from tools.registry.push import Pusher, PushOptions, human
from tools.registry.staged import Clients
from tools.staging.cli import user_path
from tools.tagconf import catalog as catalog_mod

CATALOG = Path("images/catalog.toml")


def _connection_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--insecure",
        action="store_true",
        help="plain HTTP to a non-loopback registry (loopback always uses HTTP)",
    )
    p.add_argument(
        "--ca-file", type=user_path, help="CA bundle that signs the registry's certificate"
    )
    p.add_argument("--retries", type=int, default=5, help="retries per request (default 5)")
    p.add_argument(
        "--backoff", type=float, default=0.5, help="first retry delay in seconds (doubles)"
    )


def _plan_args(p: argparse.ArgumentParser, required: bool = True) -> None:
    p.add_argument("--plan", type=Path, required=required, action="append", help="plan JSON")
    p.add_argument("--registry", help="[https://]HOST[:PORT][/NAMESPACE] instead of the plan's")


def _jobs_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--jobs", type=int, default=4, help="blobs copied at once, per image (default 4)"
    )


def _image_args(p: argparse.ArgumentParser) -> None:
    """One image (--descriptor, --spec) or every image of --plan."""
    _plan_args(p, required=False)
    p.add_argument("--descriptor", type=user_path, help="one image's descriptor JSON")
    p.add_argument("--spec", type=user_path, help="its tagconf spec JSON (tags, refs)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="registry", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    push = sub.add_parser(
        "push",
        help="push the images of a plan",
        description="Push every image of the plan: missing blobs, manifest by digest, then"
        " tags; parents first; immutable tags checked before anything is written.",
    )
    _plan_args(push)
    push.add_argument("--dry-run", action="store_true", help="print the plan, write nothing")
    _jobs_arg(push)
    _connection_args(push)

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
        description="Print each registry/repository:tag of the plan, parents first."
        " Reads only tagconf's specs: no image is built.",
    )
    _plan_args(plan)

    tags = sub.add_parser(
        "tags",
        help="list a repository's tags with digest, target and arch",
        description="List the published tags of REPO (paginated), each with its digest and"
        " the target, arch and kind tagconf parses back from it.",
    )
    tags.add_argument("repo", help="repository path, e.g. rocm-pytorch/pytorch")
    tags.add_argument("--registry", help="registry HOST[:PORT] (default: the catalogue's host)")
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
    return parser


def _catalog(path: Path | None):
    if path is None:
        root = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
        path = (Path(root) if root else Path.cwd()) / CATALOG
        if not path.exists():  # runfiles copy
            path = Path(__file__).absolute().parents[2] / CATALOG
    return catalog_mod.load(path)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _clients(args) -> Clients:
    return Clients(
        insecure=args.insecure,
        ca_file=args.ca_file,
        retries=args.retries,
        backoff=args.backoff,
        log=_log,
    )


def _client(args, host: str) -> RegistryClient:
    return _clients(args)(host)


def _images(args, need_spec: bool) -> list[PlannedImage | None]:
    """The images of --plan, or the one of --descriptor [--spec] (None without a spec)."""
    if bool(args.plan) == bool(args.descriptor):
        raise RegistryError(f"{args.command}: give --plan, or --descriptor (and --spec); not both")
    if args.plan:
        return load_plans(args.plan, args.registry)
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
    images = [(image, _descriptor(args, image)) for image in _images(args, need_spec=True)]
    clients = _clients(args)
    try:
        for ref in materialize.load(images, clients, args.docker, _log):
            print(f"loaded {ref}", flush=True)
    finally:
        clients.close()
    return 0


def cmd_plan(args) -> int:
    for image in load_plans(args.plan, args.registry):
        for ref in image.refs:
            print(ref)
    return 0


def cmd_push(args) -> int:
    images = load_plans(args.plan, args.registry)
    options = PushOptions(
        args.insecure, args.ca_file, args.retries, args.backoff, args.dry_run, args.jobs
    )
    pusher = Pusher(options)
    try:
        if args.dry_run:
            for line in pusher.dry_run(images):
                print(line)
            print(f"dry run: {len(images)} images, nothing written", file=sys.stderr)
            return 0
        result = pusher.push(images)
    finally:
        pusher.close()
    for image in result.pushed:
        for ref in image.refs:
            print(f"pushed {ref}")
    stats = [c.stats for c in pusher.clients.values()]
    summary = (
        f"{len(result.pushed)}/{len(images)} images pushed;"
        f" uploaded {sum(s.uploaded_blobs for s in stats)} blobs"
        f" ({human(sum(s.uploaded_bytes for s in stats))}),"
        f" mounted {sum(s.mounted_blobs for s in stats)},"
        f" {sum(s.requests for s in stats)} requests, {sum(s.retries for s in stats)} retries"
    )
    if result.failed:
        rest = [i.label() for i in images if i not in result.pushed and i is not result.failed]
        print(
            f"registry: error: push of {result.failed.label()} failed: {result.error}",
            file=sys.stderr,
        )
        print(
            f"  pushed: {', '.join(i.label() for i in result.pushed) or 'nothing'}", file=sys.stderr
        )
        print(f"  not pushed: {', '.join([result.failed.label(), *rest])}", file=sys.stderr)
        print(
            "  no tag points at a missing manifest; re-run the same command to finish",
            file=sys.stderr,
        )
        print(summary, file=sys.stderr)
        return 1
    print(summary, file=sys.stderr)
    return 0


def cmd_tags(args) -> int:
    catalog = _catalog(args.catalog)
    host = args.registry or split_registry(catalog.registry)[0]
    client = _client(args, host)
    try:
        rows = listing.tag_rows(client, args.repo, catalog)
    finally:
        client.close()
    if not rows:
        print(f"{host}/{args.repo}: no tags", file=sys.stderr)
    for row in rows:
        print("\t".join(row))
    return 0


def cmd_prune(args) -> int:
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
            print(f"{verb} {host}/{t.repository}:{t.tag} {t.digest} (created {t.created or '?'})")
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
    "plan": cmd_plan,
    "layout": cmd_layout,
    "load": cmd_load,
    "tags": cmd_tags,
    "prune-cache": cmd_prune,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except RegistryError as e:
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
