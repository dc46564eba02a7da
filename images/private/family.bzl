"""Implementation of image_family: the targets of one catalogue, as Bazel targets."""

load(":image.bzl", "rocm_image_rule")
load(":image_set.bzl", "image_set")
load(":push.bzl", "image_floating", "image_layout", "image_load", "image_plan", "image_push", "image_push_help", "image_report", "image_report_help", "image_verify", "no_group")

def image_label(name, arch = None):
    """The label name of catalogue target `name` for `arch` ('pytorch.gfx950', 'triton-wheel').

    Args:
      name: str, catalogue target name.
      arch: str or None; None for arch-free targets.

    Returns:
      str, a target name in the family's package.
    """
    return "%s.%s" % (name, arch) if arch else name

def dockerfile_label(path, dockerfile_dir = None):
    """The label of a repository-relative Dockerfile path ('docker/Dockerfile.base').

    Args:
      path: str, the catalogue's `dockerfile`.
      dockerfile_dir: str or None; if set, the same file name in this package.

    Returns:
      str, e.g. '//docker:Dockerfile.base'.
    """
    package, _, name = path.rpartition("/")
    return "//%s:%s" % (dockerfile_dir or package, name)

def image_family(
        name,
        catalog,
        targets,
        archs,
        default_arch,
        defaults,
        groups = {},
        families = {},
        srcs = [],
        upstream = None,
        network = "host",
        dockerfile_dir = None,
        budgets = None,
        manual = True,
        tags = [],
        visibility = None):
    """Declares every image of a catalogue: one per target and arch, plus the selectors.

    Every target `T` also gets `T.push`, `T.push.plan`, `T.push.verify`,
    `T.push.floating` and `T.push.help`, and every group `G` gets `push_G`,
    `push_G.plan`, `push_G.verify`, `push_G.floating` and `push_G.help` (see
    image_push, image_plan; `.verify` checks signatures, SBOMs and provenance
    of what the push published, see tools/registry; `.floating` that every
    floating tag in the registry names its versioned tag's digest; `.help`
    prints the push's options, targets, archs, registry and the groups
    without building anything). Without an `all` group, `push_all` (and
    `.plan`, `.verify`, `.floating`; manual) fails when run,
    in one line naming the groups. Every
    image (`T.A`, or `T` when arch-free) gets `.load` (into the local Docker
    engine under its real tags) and `.layout` (an OCI layout); both manual.

    A target whose repository is named otherwise, and by no other target, is
    also reachable by the repository's name, with every sibling the target
    has: `base.gfx950` is an alias of `pytorch-base.gfx950`, `runtime` of
    `pytorch-run`, `base.gfx950.load` of `pytorch-base.gfx950.load`,
    `runtime.push.plan` of `pytorch-run.push.plan` (also `.layout`,
    `.push`, `.push.verify`).

    For each arch target `T` and each arch or family `A` it is built for it
    creates `T.A` (pinned to A;
    its parents are the `.A` variants of its catalogue parents, or the
    arch-free parent itself) and `T` (an `image_set` that builds the variants
    `--define arch=A[,B...]` asks for). An arch-free target `T` is just `T`,
    built once in the noarch configuration and shared by every arch variant.

    `name` itself is a filegroup of every image's spec JSON (tagconf's tags,
    build args and labels for the requested archs): building it renders the
    whole family's plan without running Docker, and analysing it analyses
    every image target.

    Args:
      name: the family's spec filegroup.
      catalog: label of the catalogue TOML.
      targets: the `TARGETS` dict of the generated targets.bzl.
      archs: the `ARCHS` list of targets.bzl.
      default_arch: the `DEFAULT_ARCH` of targets.bzl.
      defaults: the `DEFAULTS` dict of targets.bzl (its keys are --define-able).
      groups: the `GROUPS` dict of targets.bzl: `push_<group>` pushes its
        members (and `push_<group>.plan` prints the tags).
      families: the `FAMILIES` dict of targets.bzl: each family `F` is one
        more variant of every arch target built for all its members (`T.F`,
        one image for every member arch; `--define arch=F` selects it).
      srcs: files the Dockerfiles COPY (scripts): a list for every image, or
        a dict from the catalogue's `dockerfile` path to that Dockerfile's
        files (so a script change rebuilds only the images that use it).
      upstream: optional label of a stand-in for the upstream image.
      network: `--network` for RUN steps ('host' or 'none').
      dockerfile_dir: build every target from the same-named Dockerfile in
        this package instead (the e2e fixture family: the real catalogue,
        tiny Dockerfiles).
      budgets: a TOML file of size budgets (`[budget_mib]` target = MiB) in place of the
        catalogue's: the fixture family's, whose images are KBs.
      manual: tag the selectable targets (`T`) `manual` too (the real family:
        `//...` never starts a multi-GB build by accident). Pinned `T.A`
        targets are always manual.
      tags: extra tags for every target (e.g. ['local']).
      visibility: visibility of every target.
    """
    selectable_tags = tags + (["manual"] if manual else [])
    catalog_label = native.package_relative_label(catalog)
    catalog_path = (catalog_label.package + "/" if catalog_label.package else "") + catalog_label.name
    native.filegroup(
        name = name,
        srcs = [":" + t for t in targets],
        output_group = "spec",
        tags = tags,
        visibility = visibility,
    )
    common = dict(
        catalog = catalog,
        budgets = budgets,
        upstream = upstream,
        network = network,
        value_keys = list(defaults.keys()),
        # --config=release (--stamp): the commit tag comes from the workspace status
        stamp = select({
            Label("//images:stamped"): True,
            "//conditions:default": False,
        }),
        visibility = visibility,
    )
    for name, t in targets.items():
        per_target = dict(
            target = name,
            repository = t["repository"],
            dockerfile = dockerfile_label(t["dockerfile"], dockerfile_dir),
            srcs = srcs.get(t["dockerfile"], []) if type(srcs) == "dict" else srcs,
            **common
        )

        def parents_for(arch):
            # An optional parent not built for this arch is left out; the
            # build passes it as an empty context (tools/imagebuild).
            return [
                ":" + image_label(p, arch if targets[p]["arch"] else None)
                for p in t["parents"]
                if not targets[p]["arch"] or arch in targets[p]["archs"] + [f for f in targets[p].get("families", []) if f in families]
            ]

        # The archs and families this target is built for (a family: every member is).
        variants = t["archs"] + [f for f in t.get("families", []) if f in families] if t["arch"] else []
        if not t["arch"]:
            rocm_image_rule(
                name = name,
                arch_free = True,
                parents = parents_for(None),
                tags = selectable_tags,
                **per_target
            )
            _materializers(name, tags, visibility)
            continue
        for arch in variants:
            rocm_image_rule(
                name = image_label(name, arch),
                arch = arch,
                parents = parents_for(arch),
                # Always manual: `:all` must not build all nine archs; the
                # image_set below builds the ones --define arch asks for.
                tags = tags + ["manual"],
                **per_target
            )
            _materializers(image_label(name, arch), tags, visibility)
        some_archs = dict(
            images = [":" + image_label(name, arch) for arch in variants],
            archs = variants,
            families = families,
            default_arch = default_arch,
            catalog = catalog_path,
            target = name,
            known_archs = archs if t["archs"] != archs else [],
        )
        image_set(name = name, tags = selectable_tags, visibility = visibility, **some_archs)
        if t["archs"] != archs:
            # What a group push takes: the archs it is built for, the others left out.
            image_set(
                name = _in_group(name),
                leave_out = True,
                tags = selectable_tags,
                visibility = visibility,
                **some_archs
            )

    # A push takes a target's arch-filtered set: `bazel build //images/...`
    # analyses every `.plan`, whatever --define arch asks for.
    for name, t in targets.items():
        _push_pair(name + ".push", [":" + _pushed(name, t, archs)], [name], catalog, selectable_tags, visibility)

    # The repository's name where it is no target's: base.gfx950 is pytorch-base.gfx950
    # (users name images as they are tagged), with every sibling the target has:
    # base.gfx950.load, base.push, base.push.plan, ...
    repositories = [t["repository"] for t in targets.values()]
    for name, t in targets.items():
        repo = t["repository"]
        if repo == name or repo in targets or len([r for r in repositories if r == repo]) > 1:
            continue
        for alias, actual, manual_only in _repository_aliases(name, repo, t, archs):
            native.alias(
                name = alias,
                actual = ":" + actual,
                tags = tags + ["manual"] if manual_only else selectable_tags,
                visibility = visibility,
            )
    for group, members in groups.items():
        _push_pair(
            "push_" + group,
            [":" + _pushed(m, targets[m], archs) for m in members],
            members,
            catalog,
            selectable_tags,
            visibility,
        )
    if groups and "all" not in groups:
        _no_all_group(groups, tags, visibility)

    # The family report of every target for the archs --define arch asks for (builds them).
    image_report(
        name = "report",
        images = [":" + _pushed(n, t, archs) for n, t in targets.items()],
        tags = selectable_tags,
        visibility = visibility,
    )
    image_report_help(
        name = "report.help",
        catalog = catalog,
        report = "report",
        tags = [t for t in tags if t != "manual"],
        visibility = visibility,
    )

def no_all_group_message(package, groups, suffix = ""):
    """Why `push_all<suffix>` fails: there is no `all` group, on purpose; the groups and what to run.

    Args:
      package: str, the family's package (`images`).
      groups: list[str], the group names in catalogue order.
      suffix: str, "" or the sibling's suffix (`.plan`, `.verify`).

    Returns:
      str, one line.
    """
    where = "//%s:" % package
    return "%spush_all%s: there is no `all` group, on purpose (a target outside every group, e.g. pytorch-test, is never pushed by accident); known groups: %s; push one with bazel run %spush_%s%s, or one target with bazel run %s<target>.push%s" % (
        where,
        suffix,
        ", ".join(groups),
        where,
        groups[0],
        suffix,
        where,
        suffix,
    )

def _no_all_group(groups, tags, visibility):
    """`push_all`, `.plan`, `.verify`: fail when run, naming the groups (there is no `all`, on purpose)."""
    for suffix in ["", ".plan", ".verify", ".floating"]:
        no_group(
            name = "push_all" + suffix,
            group = "all",
            message = no_all_group_message(native.package_name(), list(groups.keys()), suffix),
            # manual: `bazel build //images/...` need not build it
            tags = tags + ["manual"],
            visibility = visibility,
        )

def _repository_aliases(name, repo, t, archs):
    """(alias, actual, always manual) for every target the family makes for catalogue target `name`."""
    out = [(repo, name, False)]
    out += [(repo + s, name + s, False) for s in [".push", ".push.help", ".push.plan", ".push.verify", ".push.floating"]]
    if t["arch"] and t["archs"] != archs:
        out.append((_in_group(repo), _in_group(name), False))
    images = [image_label(name, a) for a in t["archs"] + t.get("families", [])] if t["arch"] else []
    for image in images:
        out.append((repo + image[len(name):], image, True))
    for image in images or [name]:
        out += [(repo + image[len(name):] + s, image + s, True) for s in [".load", ".layout"]]
    return out

def _in_group(name):
    """The image_set a push takes for a target built for some archs only."""
    return name + ".where_built"

def _pushed(name, t, archs):
    """What pushes of target `name` take: its `.where_built` set if it has one."""
    return _in_group(name) if t["arch"] and t["archs"] != archs else name

def image_labels(targets, names, archs):
    """Label names of the images of `names` for `archs` that the family declares.

    An arch-free target once, an arch target once per arch it is built for
    (its `archs` in targets.bzl).

    Args:
      targets: the `TARGETS` dict of targets.bzl.
      names: list[str], catalogue target names.
      archs: list[str], archs in the order wanted.

    Returns:
      list[str], e.g. ['pytorch.gfx950', 'triton-wheel'].
    """
    out = []
    for name in names:
        t = targets[name]
        if not t["arch"]:
            out.append(image_label(name))
            continue
        out += [image_label(name, a) for a in archs if a in t["archs"] + t.get("families", [])]
    return out

def _materializers(image, tags, visibility):
    """`<image>.load` (into the local engine) and `<image>.layout` (an OCI layout); manual."""
    image_load(
        name = image + ".load",
        images = [":" + image],
        tags = tags + ["manual"],
        visibility = visibility,
    )
    image_layout(
        name = image + ".layout",
        image = ":" + image,
        tags = tags + ["manual"],
        visibility = visibility,
    )

def _push_pair(name, images, members, catalog, tags, visibility):
    image_push(name = name, images = images, tags = tags, visibility = visibility)

    # Help without a build: it depends on the catalogue only.
    image_push_help(
        name = name + ".help",
        push = name,
        targets = members,
        catalog = catalog,
        tags = [t for t in tags if t != "manual"],
        visibility = visibility,
    )
    image_verify(name = name + ".verify", images = images, tags = tags, visibility = visibility)

    # The plan never builds an image, so it is never manual.
    image_plan(
        name = name + ".plan",
        images = images,
        tags = [t for t in tags if t != "manual"],
        visibility = visibility,
    )

    # The registry's floating tags against its versioned ones: no build either.
    image_floating(
        name = name + ".floating",
        images = images,
        tags = [t for t in tags if t != "manual"],
        visibility = visibility,
    )
