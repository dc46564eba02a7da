"""wheelhouse: collect the wheels of the *-wheel images of one arch into a pip index.

bazel run //tools/wheelhouse -- --arch gfx950 --out /tmp/wh --from-staging bazel-out
bazel run //tools/wheelhouse -- --arch gfx950 --out /tmp/wh --from-registry
PIP_CONFIG_FILE=/dev/null pip install --index-url file:///tmp/wh/simple torch vllm
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tools import places
from tools.envvars import SettingError
from tools.oci.errors import RegistryError
from tools.tagconf import catalog as catalog_mod
from tools.tagconf.errors import TagconfError, nearest
from tools.tagconf.model import Catalog
from tools.tagconf.tags import KINDS, parse_assignment, render_tags, resolve_values
from tools.wheelhouse import house, policy
from tools.wheelhouse.errors import WheelhouseError

PROG = "wheelhouse"
CATALOG = Path("images/catalog.toml")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: `wheelhouse: error: <what>; <fix>`, exit 2."""

    def error(self, message: str):
        self.exit(2, f"{PROG}: error: {message}; see {PROG} --help\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        description="Collect the wheels of the *-wheel images (the catalogue's wheels group)"
        " of one GPU arch, from a registry or from the images Bazel built into the staging"
        " registry (found through their <name>.json descriptors), into OUT with a PEP 503"
        " simple index: pip install --index-url file://OUT/simple torch vllm."
        " Refuses images of another arch (triton-wheel is arch-free and always fits) and"
        " images of different ROCm versions.",
        epilog="Relative paths are taken from the directory bazel run was started in.",
    )
    p.add_argument("--arch", help="GPU arch of the wheelhouse (default: the catalogue's)")
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="wheelhouse directory")
    src = p.add_argument_group(
        "sources (--from-registry, or staged images: --from-staging and/or --descriptor)"
    )
    src.add_argument(
        "--from-registry",
        nargs="?",
        const="",
        metavar="HOST[:PORT]/NAMESPACE",
        help="pull each wheel image from this registry (no value: the catalogue's)",
    )
    src.add_argument(
        "--from-staging",
        nargs="+",
        action="extend",
        type=Path,
        metavar="DIR",
        help="find the image descriptors (<name>.json) under DIR (recursively; bazel-out"
        " finds every configuration) and read their images from the staging registry they"
        " name; images of other archs or targets are skipped",
    )
    src.add_argument(
        "--descriptor",
        action="append",
        type=Path,
        metavar="PATH",
        help="one image descriptor, the <name>.json an image target built (repeatable);"
        " one of another arch is refused",
    )
    p.add_argument(
        "--target",
        action="append",
        metavar="T",
        help="collect only these wheel targets (repeatable; default: the wheels group)",
    )
    reg = p.add_argument_group("registry options (--tag and --set only with --from-registry)")
    reg.add_argument(
        "--tag",
        choices=KINDS,
        default="floating",
        help="which tag to pull: floating (latest-<arch>, latest for arch-free; default),"
        " versioned or immutable, rendered by tagconf",
    )
    reg.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="catalogue value for versioned/immutable tags, e.g. ROCM_VERSION=10.2.0 or"
        " VCS_REF=1a2b3c4",
    )
    reg.add_argument("--insecure", action="store_true", help="plain HTTP to a non-loopback host")
    reg.add_argument("--ca-file", type=Path, help="CA bundle that signs the registry's certificate")
    reg.add_argument("--retries", type=int, default=5, help="retries per request (default 5)")
    p.add_argument("--catalog", type=Path, help="catalogue (default: images/catalog.toml)")
    return p


def _path(path: Path) -> Path:
    """A user path, relative to where `bazel run` was started."""
    path = path.expanduser()
    base = os.environ.get("BUILD_WORKING_DIRECTORY")
    return path if path.is_absolute() or not base else Path(base) / path


def _catalog(path: Path | None) -> Catalog:
    if path is not None:
        return catalog_mod.load(_path(path))
    return catalog_mod.load(places.workspace() / CATALOG)


def _wanted(catalog: Catalog, targets: list[str] | None) -> tuple[str, ...]:
    wheels = catalog.group("wheels")
    for t in targets or []:
        if t not in wheels:
            raise WheelhouseError(f"--target {t}: not a wheel target", nearest(t, wheels))
    return tuple(t for t in wheels if not targets or t in targets)


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _from_staging(args, catalog: Catalog, arch: str, wanted: tuple[str, ...], source):
    """(images, number of staged images skipped: other archs or targets)."""
    if args.set or args.tag != "floating":
        raise WheelhouseError(
            "--tag and --set choose registry tags", "drop them with --from-staging/--descriptor"
        )
    images, skipped = [], []
    if args.from_staging:
        found = source.scan([_path(d) for d in args.from_staging], catalog)
        images, skipped = policy.pick(found, arch, wanted)
    if args.descriptor:
        images += source.explicit([_path(p) for p in args.descriptor], catalog)
    return images, len(skipped)


def _from_registry(args, catalog: Catalog, arch: str, wanted: tuple[str, ...], source) -> list:
    values = resolve_values(catalog, dict(parse_assignment(s) for s in args.set))
    images = []
    for name in wanted:
        target = catalog.target(name)
        if not catalog.builds(target, arch):  # aiter-wheel on RDNA: nothing was published
            _log(f"{catalog.not_built(target, arch)}: left out of the wheelhouse")
            continue
        tags = render_tags(catalog, target, arch if target.arch else None, values)
        tag = getattr(tags, args.tag)
        if tag is None:
            raise WheelhouseError(
                "--tag immutable: no immutable tag without a VCS_REF", "add --set VCS_REF=<sha>"
            )
        images.append(source.image(catalog, name, target.repository, tag))
    return images


def run(args) -> int:
    catalog = _catalog(args.catalog)
    arch = catalog.check_arch(args.arch or catalog.default_arch)
    wanted = _wanted(catalog, args.target)
    from_staging = bool(args.from_staging or args.descriptor)
    if args.from_registry is not None and from_staging:
        raise WheelhouseError(
            "--from-registry and --from-staging/--descriptor both given", "collect from one source"
        )
    if args.from_registry is None and not from_staging:
        raise WheelhouseError(
            "no source given",
            "pass --from-registry [HOST/NS], --from-staging DIR or --descriptor PATH",
        )
    out = _path(args.out)
    house.check_out(out)
    source = None
    skipped = 0
    options = dict(
        insecure=args.insecure,
        ca_file=args.ca_file and _path(args.ca_file),
        retries=args.retries,
        log=_log,
    )
    try:
        try:  # httpx: only needed to talk to a registry
            if from_staging:
                from tools.wheelhouse.staged import StagingSource
            else:
                from tools.wheelhouse.registry import RegistrySource
        except ImportError as e:
            flag = "--from-staging/--descriptor" if from_staging else "--from-registry"
            raise WheelhouseError(
                f"{flag} needs {e.name}", "run it as bazel run //tools/wheelhouse"
            ) from None
        if from_staging:
            source = StagingSource(**options)
            images, skipped = _from_staging(args, catalog, arch, wanted, source)
            fix = (
                "build them (e.g. bazel build //images:{example}) and pass bazel-out,"
                " or collect fewer with --target"
            )
        else:
            source = RegistrySource(args.from_registry or catalog.registry, **options)
            images = _from_registry(args, catalog, arch, wanted, source)
            fix = "publish them first"
        images, rocm = policy.check(
            images, catalog=catalog, arch=arch, wanted=wanted, missing_fix=fix
        )
        if skipped:
            _log(f"skipped {skipped} staged images of other archs or targets")
        if from_staging:  # a lost image fails here, before any layer is read
            source.check_staged(images)
        result = house.write(images, out, arch=arch, rocm_version=rocm, log=_log)
    finally:
        if source is not None:
            source.close()
    print(
        f"{PROG}: {len(result.wheels)} wheels for {arch}, ROCm {rocm},"
        f" from {len(result.images)} images, in {out}"
    )
    width = max(len(w.filename) for w in result.wheels)
    for w in result.wheels:
        print(f"  {w.filename:<{width}}  {w.image.label()}")
    # PIP_CONFIG_FILE=/dev/null: no configured extra index or constraint joins in
    index = (out / "simple").absolute().as_uri()
    print(f"install: PIP_CONFIG_FILE=/dev/null pip install --index-url {index} torch vllm")
    print(f"note: {house.for_images(arch, rocm)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except (WheelhouseError, TagconfError, SettingError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except RegistryError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
