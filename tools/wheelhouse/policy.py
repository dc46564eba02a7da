"""The refusals: one wheelhouse is one arch and one ROCm version, every target once.

Pure functions over identified images; each error names the offending
images (with where they came from) and the fix.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tools.tagconf.model import Catalog
from tools.wheelhouse.errors import WheelhouseError
from tools.wheelhouse.model import WheelImage


def pick(
    images: Iterable[WheelImage], arch: str, wanted: Sequence[str]
) -> tuple[list[WheelImage], list[WheelImage]]:
    """Split images found by a directory scan into (kept, skipped).

    Kept: the wanted targets built for ``arch`` or arch-free. A directory of
    Bazel outputs legitimately holds every arch side by side, so this is a
    selection, not a refusal; images named one by one go to ``check``.
    """
    kept, skipped = [], []
    for image in images:
        if image.target in wanted and image.arch in (arch, None):
            kept.append(image)
        else:
            skipped.append(image)
    return kept, skipped


def dedupe(images: Iterable[WheelImage]) -> list[WheelImage]:
    """One image per (target, arch); the same digest found twice is one image."""
    by_key: dict[tuple[str, str | None], WheelImage] = {}
    for image in images:
        key = (image.target, image.arch)
        other = by_key.setdefault(key, image)
        if other.digest != image.digest:
            raise WheelhouseError(
                f"two different images of {image.label()}: {other.digest[:19]} from"
                f" {other.origin} and {image.digest[:19]} from {image.origin}",
                "pass only the one you want (--descriptor PATH), or delete the stale one",
            )
    return list(by_key.values())


def check_wheel_targets(images: Iterable[WheelImage], wanted: Sequence[str]) -> None:
    """Every image named one by one must be one of the wheel targets collected."""
    bad = [i for i in images if i.target not in wanted]
    if bad:
        raise WheelhouseError(
            "not one of the wheel images collected: " + ", ".join(i.describe() for i in bad),
            f"pass images of {', '.join(wanted)} only (the wheels group, or --target)",
        )


def check_arch(images: Iterable[WheelImage], arch: str, catalog: Catalog) -> None:
    """Refuse an image built for another arch (arch-free images always fit)."""
    arch_targets = {t.name for t in catalog.targets if t.arch}
    unknown = [i for i in images if i.arch is None and i.target in arch_targets]
    if unknown:
        raise WheelhouseError(
            "cannot tell the arch of " + ", ".join(f"{i.target} from {i.origin}" for i in unknown),
            "use images built by the image rules (they carry the org.rocm-pytorch.image.arch"
            " label) or pull them by an arch tag",
        )
    other = [i for i in images if i.arch is not None and i.arch != arch]
    if other:
        archs = sorted({i.arch for i in other if i.arch})
        raise WheelhouseError(
            f"refusing to mix archs: this is a {arch} wheelhouse (--arch {arch}), but "
            + ", ".join(i.describe() for i in other)
            + (" is" if len(other) == 1 else " are")
            + f" built for {', '.join(archs)}",
            f"leave {'it' if len(other) == 1 else 'them'} out, or collect a separate"
            f" wheelhouse with --arch {archs[0]}",
        )


def check_complete(
    images: Iterable[WheelImage], catalog: Catalog, arch: str, wanted: Sequence[str], fix: str
) -> None:
    """Every wanted target built for ``arch`` is there (aiter-wheel is not built for every
    arch). ``fix`` may name ``{example}``: a missing image."""
    have = {i.target for i in images}
    missing = [t for t in wanted if t not in have and catalog.builds(catalog.target(t), arch)]
    if missing:
        first = next(t for t in catalog.targets if t.name == missing[0])
        example = f"{first.name}.{arch}" if first.arch else first.name
        what = f"no {arch} image of {', '.join(missing)}"
        raise WheelhouseError(what, fix.format(example=example))


def check_rocm(images: Sequence[WheelImage]) -> str:
    """The one ROCm version of all images; refuse a mix or an unknown one."""
    unknown = [i for i in images if i.rocm_version is None]
    if unknown:
        raise WheelhouseError(
            "cannot tell the ROCm version of " + ", ".join(i.describe() for i in unknown),
            "its versioned tag is unknown (no org.opencontainers.image.version"
            " label); pull it by its versioned tag (--tag versioned) or rebuild it",
        )
    groups: dict[str, list[WheelImage]] = {}
    for image in images:
        groups.setdefault(image.rocm_version or "", []).append(image)
    if len(groups) > 1:
        # the largest group first; the others are the odd ones out, with origins
        ordered = sorted(groups.items(), key=lambda kv: -len(kv[1]))
        parts = [f"ROCm {ordered[0][0]}: " + ", ".join(i.label() for i in ordered[0][1])] + [
            f"ROCm {v}: " + ", ".join(i.describe() for i in imgs) for v, imgs in ordered[1:]
        ]
        raise WheelhouseError(
            "refusing to mix ROCm versions: " + "; ".join(parts),
            "rebuild or re-publish all wheel images with one ROCM_VERSION"
            f" (e.g. --define ROCM_VERSION={ordered[0][0]}), then collect again",
        )
    if not groups:
        raise WheelhouseError(
            "no wheel images to collect", "pass --from-registry, --from-staging or --descriptor"
        )
    return next(iter(groups))


def check(
    images: Sequence[WheelImage],
    *,
    catalog: Catalog,
    arch: str,
    wanted: Sequence[str],
    missing_fix: str,
) -> tuple[list[WheelImage], str]:
    """All refusals in order; returns the images (one per target) and the ROCm version."""
    check_wheel_targets(images, wanted)
    check_arch(images, arch, catalog)
    images = dedupe(images)
    check_complete(images, catalog, arch, wanted, missing_fix)
    rocm = check_rocm(images)
    order = {t: n for n, t in enumerate(wanted)}
    return sorted(images, key=lambda i: order[i.target]), rocm
