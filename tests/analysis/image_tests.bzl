"""Analysis tests of the image rule, the arch transition and image_set."""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts", "unittest")

# The names the repository rule read from images/catalog.toml (client_settings.bzl).
load("@rocm_pytorch_client//:catalog_names.bzl", CATALOG_ERROR = "ERROR", CATALOG_NAMES = "NAMES")
load("//images:defs.bzl", "ImageInfo", "ImageSetInfo", "image_set")
load("//images:targets.bzl", "ARCHS", "FAMILIES")

# buildifier: disable=bzl-visibility
load("//images/private:arch_transition.bzl", "close_archs", "parse_arch_request", "unknown_arch_error")

# buildifier: disable=bzl-visibility
load("//images/private:catalog_names.bzl", "catalog_names")

# buildifier: disable=bzl-visibility
load("//images/private:define_check.bzl", "define_check_error")

# buildifier: disable=bzl-visibility
load("//images/private:defines.bzl", "defines_error", "unknown_define_error", "upstream_image_error")

# buildifier: disable=bzl-visibility
load("//images/private:family.bzl", "dockerfile_label", "image_label", "image_labels", "no_all_group_message")

# buildifier: disable=bzl-visibility
load("//images/private:image.bzl", "mode_arguments", "spec_arguments")

# buildifier: disable=bzl-visibility
load("//images/private:image_set.bzl", "not_built_message")

# buildifier: disable=bzl-visibility
load("//images/private:reference.bzl", "registry_error")

# buildifier: disable=bzl-visibility
load("//images/private:settings.bzl", "builder_for", "parse_builders")

def _action(env, mnemonic):
    actions = [a for a in analysistest.target_actions(env) if a.mnemonic == mnemonic]
    asserts.equals(env, 1, len(actions), "one %s action" % mnemonic)
    return actions[0]

def _flag(argv, name):
    """The value after `name` in argv, or None."""
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
    return None

# ---- a pinned arch reaches the spec (and so PYTORCH_ROCM_ARCH) -------------

def _pinned_arch_reaches_the_build_impl(ctx):
    """rocm-runtime.gfx1201 renders its spec for gfx1201 and builds on the stand-in upstream."""
    env = analysistest.begin(ctx)
    info = analysistest.target_under_test(env)[ImageInfo]
    asserts.equals(env, "gfx1201", info.arch)
    asserts.equals(env, "rocm-runtime", info.repository)
    spec = _action(env, "ImageSpec")
    asserts.equals(env, "gfx1201", _flag(spec.argv, "--arch"))
    asserts.equals(env, "rocm-runtime", _flag(spec.argv, "--target"))
    build = _action(env, "ImageBuild")
    asserts.true(env, "--upstream" in build.argv, "the stand-in upstream is passed")

    # only content reaches the build: the build spec, never the publish spec
    inputs = [f.basename for f in build.inputs.to_list()]
    asserts.true(env, "rocm-runtime.gfx1201.build.json" in inputs, "the build spec is an input")
    asserts.false(env, "rocm-runtime.gfx1201.spec.json" in inputs, "tags/registry are not inputs")

    # the image goes to staging; Bazel keeps a descriptor, no layout
    asserts.equals(env, "embedded", _flag(build.argv, "--staging"))

    # no --define reproducible=1 (tests cannot set one): BuildKit's plain output
    asserts.false(env, "--reproducible" in build.argv, "a plain build is not reproducible")
    asserts.equals(env, ["rocm-runtime.gfx1201.json"], [f.basename for f in build.outputs.to_list()])
    return analysistest.end(env)

pinned_arch_reaches_the_build_test = analysistest.make(_pinned_arch_reaches_the_build_impl)

# ---- the build log is the output base's, not the user's --------------------

def _build_log_is_the_output_bases_impl(ctx):
    """ImageBuild writes BuildKit's log under the execroot's bazel-out/, not a home.

    Per output base, hence per clone: relative to the execroot it runs in.
    """
    env = analysistest.begin(ctx)
    build = _action(env, "ImageBuild")
    asserts.equals(env, "bazel-out/logs/tests/e2e/rocm-runtime.gfx1201.log", _flag(build.argv, "--log"))
    return analysistest.end(env)

build_log_is_the_output_bases_test = analysistest.make(_build_log_is_the_output_bases_impl)

# ---- arch-free targets have no arch ----------------------------------------

def _arch_free_target_has_no_arch_impl(ctx):
    """triton-wheel renders its spec without --arch and carries arch None."""
    env = analysistest.begin(ctx)
    info = analysistest.target_under_test(env)[ImageInfo]
    asserts.equals(env, None, info.arch)
    asserts.equals(env, None, _flag(_action(env, "ImageSpec").argv, "--arch"))
    return analysistest.end(env)

arch_free_target_has_no_arch_test = analysistest.make(_arch_free_target_has_no_arch_impl)

# ---- parents are the same-arch variants, arch-free parents are shared ------

def _arch_free_parent_is_shared_impl(ctx):
    """pytorch.gfx950 and pytorch.gfx1201 share one triton-wheel and pytorch-src build."""
    env = unittest.begin(ctx)
    a = {p.target: p for p in ctx.attr.a[ImageInfo].parents}
    b = {p.target: p for p in ctx.attr.b[ImageInfo].parents}
    asserts.equals(env, ["pytorch-base", "pytorch-src", "triton-wheel"], sorted(a.keys()))
    for shared in ["triton-wheel", "pytorch-src"]:
        asserts.equals(env, a[shared].descriptor.path, b[shared].descriptor.path, shared + " built once")
        asserts.equals(env, None, a[shared].arch)
    asserts.equals(env, "gfx950", a["pytorch-base"].arch)
    asserts.equals(env, "gfx1201", b["pytorch-base"].arch)
    asserts.false(env, a["pytorch-base"].descriptor.path == b["pytorch-base"].descriptor.path)
    return unittest.end(env)

arch_free_parent_is_shared_test = unittest.make(
    _arch_free_parent_is_shared_impl,
    attrs = {
        "a": attr.label(providers = [ImageInfo]),
        "b": attr.label(providers = [ImageInfo]),
    },
)

# ---- image_set follows --define arch ---------------------------------------

def _image_set_default_arch_impl(ctx):
    """Without --define arch, //tests/e2e:pytorch builds the default arch only."""
    env = analysistest.begin(ctx)
    images = analysistest.target_under_test(env)[ImageSetInfo].images
    asserts.equals(env, ["gfx950"], [i.arch for i in images])
    asserts.equals(env, ["pytorch"], [i.target for i in images])
    return analysistest.end(env)

image_set_default_arch_test = analysistest.make(_image_set_default_arch_impl)

# Starlark cannot set --define in a test's configuration ("transition on
# --define not supported"), so the parser is tested here as a table and the
# wiring end to end (.ci/e2e_checks.py builds with --define arch=...).
_KNOWN = ["gfx90a", "gfx942", "gfx950", "gfx1201"]

# How an unknown-arch error ends when the catalogue file's own names are not known.
_REGENERATE = "; if you added it to images/catalog.toml, regenerate images/targets.bzl: bazel run //images:update_targets"

def _arch_request_parsing_impl(ctx):
    """`--define arch=` values: order kept, duplicates dropped, unknown ones name the closest and the known list."""
    env = unittest.begin(ctx)
    known = "known: gfx90a, gfx942, gfx950, gfx1201 (or all)"
    rows = [
        ("one arch", "gfx950", ["gfx950"], None),
        ("two archs in the given order", "gfx1201,gfx950", ["gfx1201", "gfx950"], None),
        ("spaces and duplicates", "gfx950, gfx950 ,gfx942", ["gfx950", "gfx942"], None),
        ("unknown arch: the nearest", "gfx951", [], "--define arch=gfx951: unknown arch \"gfx951\"; did you mean \"gfx950\"? " + known + _REGENERATE),
        ("another case: that arch", "GFX950", [], "--define arch=GFX950: unknown arch \"GFX950\"; did you mean \"gfx950\"? " + known + _REGENERATE),
        ("unknown among known", "gfx950,gfx12O1", [], "--define arch=gfx950,gfx12O1: unknown arch \"gfx12O1\"; did you mean \"gfx1201\"? " + known + _REGENERATE),
        ("nothing close", "mi300", [], "--define arch=mi300: unknown arch \"mi300\"; " + known + _REGENERATE),
        ("empty entry", "gfx950,", [], "--define arch=gfx950,: unknown arch \"\"; " + known + _REGENERATE),
        ("all is every known arch, in catalogue order", "all", _KNOWN, None),
        ("all inside a list is not an arch", "gfx950,all", [], "--define arch=gfx950,all: unknown arch \"all\"; " + known + _REGENERATE),
    ]
    for desc, spec, archs, error in rows:
        got = parse_arch_request(spec, _KNOWN)
        asserts.equals(env, archs, got.archs, desc)
        asserts.equals(env, error, got.error, desc)
    return unittest.end(env)

arch_request_parsing_test = unittest.make(_arch_request_parsing_impl)

# ---- arch families ----------------------------------------------------------

_FAMILIES = {"gfx110X-all": ["gfx1100", "gfx1101"], "gfx94X-gfx950-dcgpu": ["gfx942", "gfx950"]}
_FAMILY_KNOWN = ["gfx942", "gfx950", "gfx1100", "gfx1101"]
_FAMILY_LIST = "known archs: gfx942, gfx950, gfx1100, gfx1101 (or all); families: gfx110X-all (gfx1100+gfx1101), gfx94X-gfx950-dcgpu (gfx942+gfx950)"

def _family_request_parsing_impl(ctx):
    """A family name stands wherever an arch does; `all` is the single archs; bad names list both."""
    env = unittest.begin(ctx)
    rows = [
        ("a family", "gfx110X-all", ["gfx110X-all"], None),
        ("a family in a list, order kept", "gfx950,gfx110X-all", ["gfx950", "gfx110X-all"], None),
        ("a family and its member are two variants", "gfx1100,gfx110X-all,gfx1100", ["gfx1100", "gfx110X-all"], None),
        ("all is every single arch, no family", "all", _FAMILY_KNOWN, None),
        (
            "a family's stem names its families",
            "gfx110X",
            [],
            "--define arch=gfx110X: unknown arch or family \"gfx110X\"; did you mean \"gfx110X-all\"? " + _FAMILY_LIST + _REGENERATE,
        ),
        (
            "a miscased family",
            "gfx110x-all",
            [],
            "--define arch=gfx110x-all: unknown arch or family \"gfx110x-all\"; did you mean \"gfx110X-all\"? " + _FAMILY_LIST + _REGENERATE,
        ),
        (
            "an unknown name in a list: the nearest family",
            "gfx110X-all,gfx120X-all",
            [],
            "--define arch=gfx110X-all,gfx120X-all: unknown arch or family \"gfx120X-all\"; did you mean \"gfx110X-all\"? " + _FAMILY_LIST + _REGENERATE,
        ),
    ]
    for desc, spec, archs, error in rows:
        got = parse_arch_request(spec, _FAMILY_KNOWN, _FAMILIES)
        asserts.equals(env, archs, got.archs, desc)
        asserts.equals(env, error, got.error, desc)
    return unittest.end(env)

family_request_parsing_test = unittest.make(_family_request_parsing_impl)

def _close_archs_impl(ctx):
    """The closest archs or families of an unknown name: another case first, then a stem, then the nearest."""
    env = unittest.begin(ctx)
    rows = [
        ("a typo", "gfx951", ["gfx950"]),
        ("upper case", "GFX950", ["gfx950"]),
        ("a miscased family", "GFX110X-ALL", ["gfx110X-all"]),
        ("a family's stem", "gfx120X", ["gfx120X-all"]),
        ("a stem of several", "gfx110X", ["gfx110X-dgpu", "gfx110X-all"]),
        ("as near as each other: all of them, in order", "gfx1202", ["gfx1102", "gfx1200", "gfx1201"]),
        ("one more digit", "gfx9500", ["gfx950"]),
        ("nothing near", "mi300x", []),
    ]
    families = {
        "gfx110X-dgpu": ["gfx1100", "gfx1101", "gfx1102"],
        "gfx110X-all": ["gfx1100", "gfx1101", "gfx1102", "gfx1103"],
        "gfx120X-all": ["gfx1200", "gfx1201"],
    }
    known = ["gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1200", "gfx1201"]
    for desc, name, want in rows:
        asserts.equals(env, want, close_archs(name, known, families), desc)
    return unittest.end(env)

close_archs_test = unittest.make(_close_archs_impl)

def _stale_targets_bzl_impl(ctx):
    """An arch the catalogue file names and targets.bzl lacks: regenerate targets.bzl, not "did you mean"."""
    env = unittest.begin(ctx)
    known = ["gfx942", "gfx950", "gfx1151"]
    families = {"gfx94X-gfx950-dcgpu": ["gfx942", "gfx950"]}
    listing = "known archs: gfx942, gfx950, gfx1151 (or all); families: gfx94X-gfx950-dcgpu (gfx942+gfx950)"
    now = known + list(families.keys())
    rows = [
        (
            "a new arch of the catalogue",
            "gfx1152",
            now + ["gfx1152"],
            "--define arch=gfx1152: \"gfx1152\" is in images/catalog.toml but not in images/targets.bzl, which is older than the catalogue; regenerate it: bazel run //images:update_targets",
        ),
        (
            "a new family of the catalogue, in a list",
            "gfx950,gfx115X-dgpu",
            now + ["gfx1152", "gfx115X-dgpu"],
            "--define arch=gfx950,gfx115X-dgpu: \"gfx115X-dgpu\" is in images/catalog.toml but not in images/targets.bzl, which is older than the catalogue; regenerate it: bazel run //images:update_targets",
        ),
        (
            "a typo while targets.bzl lags: both",
            "gfx1153",
            ["gfx950", "gfx1151", "gfx1152"] + list(families.keys()),
            "--define arch=gfx1153: unknown arch or family \"gfx1153\"; did you mean \"gfx1151\"? " + listing + "; images/targets.bzl is older than images/catalog.toml (the catalogue adds gfx1152 and drops gfx942): regenerate it with bazel run //images:update_targets",
        ),
        (
            "targets.bzl has the catalogue's names: a typo only",
            "gfx951",
            now,
            "--define arch=gfx951: unknown arch or family \"gfx951\"; did you mean \"gfx950\"? " + listing,
        ),
        (
            "the catalogue's names not known: what to run if it was just added",
            "gfx1152",
            None,
            "--define arch=gfx1152: unknown arch or family \"gfx1152\"; did you mean \"gfx1151\"? " + listing + _REGENERATE,
        ),
    ]
    for desc, spec, catalog, want in rows:
        got = parse_arch_request(spec, known, families, catalog)
        asserts.equals(env, want, got.error, desc)
    asserts.equals(
        env,
        rows[0][3],
        unknown_arch_error("gfx1152", "gfx1152", known, families, now + ["gfx1152"]),
    )
    return unittest.end(env)

stale_targets_bzl_test = unittest.make(_stale_targets_bzl_impl)

# ---- the catalogue's names, as the repository rule reads them ----------------

_CATALOG = """\
registry = "r.example/x"  # [archs] in a comment
[defaults]
ROCM_VERSION = "9.8.7-full"

[archs]
# every arch
known = [
    "gfx942",  # MI300
    "gfx950",
    "gfx1100"
]
default = "gfx950"

[families]
gfx94X-gfx950-dcgpu = ["gfx942", "gfx950"] # two
"gfx110X" = [
    "gfx1100",
]

[[targets]]
name = "pytorch"
archs = ["gfx942"]
"""

def _catalog_names_impl(ctx):
    """The archs and family names of the catalogue's text; anything not understood is an error, never wrong names."""
    env = unittest.begin(ctx)
    got = catalog_names(_CATALOG)
    asserts.equals(env, None, got.error)
    asserts.equals(env, ["gfx942", "gfx950", "gfx1100"], got.archs)
    asserts.equals(env, ["gfx94X-gfx950-dcgpu", "gfx110X"], got.families)
    asserts.equals(env, ["gfx950"], catalog_names("[archs]\nknown = [\"gfx950\"]\n").archs, "one line, no families")
    refused = [
        ("no [archs]", "registry = \"r\"\n"),
        ("an inline table", "archs = { known = [\"gfx950\"] }\n"),
        ("known not a list", "[archs]\nknown = \"gfx950\"\n"),
        ("a family not a list", "[archs]\nknown = [\"gfx950\"]\n[families]\nf = \"gfx950\"\n"),
        ("an unterminated list", "[archs]\nknown = [\n\"gfx950\",\n"),
        ("a name that is no name", "[archs]\nknown = [gfx950]\n"),
    ]
    for desc, text in refused:
        got = catalog_names(text)
        asserts.true(env, got.error != None, desc)
        asserts.equals(env, [], got.archs + got.families, desc)
    return unittest.end(env)

catalog_names_test = unittest.make(_catalog_names_impl)

def _catalog_names_of_the_catalogue_impl(ctx):
    """The repository rule reads images/catalog.toml's names as tagconf does: targets.bzl's, in order.

    (//tests/generated:targets_bzl_test holds targets.bzl to the catalogue.)
    """
    env = unittest.begin(ctx)
    asserts.equals(env, None, CATALOG_ERROR)
    asserts.equals(env, ARCHS + list(FAMILIES.keys()), CATALOG_NAMES)
    return unittest.end(env)

catalog_names_of_the_catalogue_test = unittest.make(_catalog_names_of_the_catalogue_impl)

# ---- //images:defines: the build's one check of its --defines --------------

def _define_check_error_impl(ctx):
    """//images:defines' check: the defines first, then --define arch= with the catalogue file's names."""
    env = unittest.begin(ctx)
    archs = ["gfx942", "gfx950"]
    families = {"gfx94X-gfx950-dcgpu": ["gfx942", "gfx950"]}
    now = archs + ["gfx94X-gfx950-dcgpu"]

    def check(var, catalog = now):
        return define_check_error(var, archs, families, "gfx950", ["ROCM_VERSION"], catalog)

    asserts.equals(env, None, check({}), "nothing given: the default arch")
    asserts.equals(env, None, check({"arch": "gfx942,gfx94X-gfx950-dcgpu", "ROCM_VERSION": "7"}))
    got = check({"arch": "gfx951"})
    asserts.equals(env, "arch=gfx951", got.subject)
    asserts.true(env, got.message.startswith("--define arch=gfx951: unknown arch or family \"gfx951\"; did you mean \"gfx950\"? known archs: gfx942, gfx950 (or all)"), got.message)
    asserts.true(env, got.message.endswith("(gfx942+gfx950)"), "targets.bzl is the catalogue's: " + got.message)
    got = check({"arch": "gfx1152"}, now + ["gfx1152"])
    asserts.equals(env, "arch=gfx1152", got.subject)
    asserts.equals(env, "--define arch=gfx1152: \"gfx1152\" is in images/catalog.toml but not in images/targets.bzl, which is older than the catalogue; regenerate it: bazel run //images:update_targets", got.message)
    got = check({"arch": "gfx1152"}, None)
    asserts.true(env, got.message.endswith(_REGENERATE), "the catalogue's names not known: " + got.message)

    # a key nobody reads comes first, with its own subject (the message's KEY=VALUE)
    got = check({"arch": "gfx951", "regsitry": "h/n"})
    asserts.equals(env, None, got.subject)
    asserts.true(env, got.message.startswith("--define regsitry=h/n: unknown key regsitry; did you mean --image_registry?"), got.message)
    return unittest.end(env)

define_check_error_test = unittest.make(_define_check_error_impl)

def _define_check_fails_impl(ctx):
    """A define_check fails analysis (analysistest sees the tail of its line: the table above has the message)."""
    env = analysistest.begin(ctx)
    asserts.expect_failure(env, "$(arch=gfx951) not defined")
    return analysistest.end(env)

define_check_fails_test = analysistest.make(_define_check_fails_impl, expect_failure = True)

def _define_check_stale_impl(ctx):
    """A define_check whose catalogue names have the arch fails too (the table above has the message)."""
    env = analysistest.begin(ctx)
    asserts.expect_failure(env, "$(arch=gfx1152) not defined")
    return analysistest.end(env)

define_check_stale_test = analysistest.make(_define_check_stale_impl, expect_failure = True)

def _define_check_passes_impl(ctx):
    """A known arch and known keys: nothing to say."""
    env = analysistest.begin(ctx)
    asserts.equals(env, [], analysistest.target_actions(env))
    return analysistest.end(env)

define_check_passes_test = analysistest.make(_define_check_passes_impl)

# ---- report.help: the report's own help -------------------------------------

def _report_help_is_the_reports_impl(ctx):
    """`report.help` runs `registry about` on a file saying what to explain: the report, its label, archs, registry.

    Not `registry report --help`, the tool's help (its `--plan`, which the
    launcher gives, and a push's `--chunk-size`). tests/registry's
    launcher_test runs it.
    """
    env = analysistest.begin(ctx)
    writes = {a.outputs.to_list()[0].basename: a.content for a in analysistest.target_actions(env) if a.mnemonic == "FileWrite"}
    launcher = writes["report.help.sh"]
    asserts.true(env, " about --about \"$r/_main/tests/e2e/report.help.json\" \"$@\"" in launcher, launcher)
    asserts.false(env, "report --help" in launcher, launcher)
    about = json.decode(writes["report.help.json"])
    asserts.equals(env, {
        "arch": None,
        "catalog": "images/catalog.toml",
        "command": "report",
        "label": "//tests/e2e:report",
        "registry": None,
    }, about)
    return analysistest.end(env)

report_help_is_the_reports_test = analysistest.make(_report_help_is_the_reports_impl)

def _family_reaches_the_build_impl(ctx):
    """rocm-runtime.gfx110X-dgpu is one image, its spec rendered for the family.

    tagconf makes its PYTORCH_ROCM_ARCH the members (tests/tagconf holds that).
    """
    env = analysistest.begin(ctx)
    info = analysistest.target_under_test(env)[ImageInfo]
    asserts.equals(env, "gfx110X-dgpu", info.arch)
    asserts.equals(env, "gfx110X-dgpu", _flag(_action(env, "ImageSpec").argv, "--arch"))
    asserts.equals(env, ["rocm-runtime.gfx110X-dgpu.json"], [f.basename for f in _action(env, "ImageBuild").outputs.to_list()])
    return analysistest.end(env)

family_reaches_the_build_test = analysistest.make(_family_reaches_the_build_impl)

def _family_parents_impl(ctx):
    """A family's parents are the same family's images: vllm for MI300+MI355 gets aiter, for gfx110X-all not."""
    env = unittest.begin(ctx)
    cdna = {p.target: p.arch for p in ctx.attr.cdna[ImageInfo].parents}
    rdna = {p.target: p.arch for p in ctx.attr.rdna[ImageInfo].parents}
    asserts.equals(env, "gfx94X-gfx950-dcgpu", cdna.get("aiter-wheel"))
    asserts.equals(env, "gfx94X-gfx950-dcgpu", cdna["pytorch"])
    asserts.false(env, "aiter-wheel" in rdna, "aiter-wheel is CDNA only")
    asserts.equals(env, "gfx110X-all", rdna["pytorch"])
    asserts.equals(env, None, rdna["triton-wheel"])
    return unittest.end(env)

family_parents_test = unittest.make(
    _family_parents_impl,
    attrs = {
        "cdna": attr.label(providers = [ImageInfo]),
        "rdna": attr.label(providers = [ImageInfo]),
    },
)

def _family_set_impl(ctx):
    """An image_set asked for a family picks the family's one image."""
    env = analysistest.begin(ctx)
    info = analysistest.target_under_test(env)[ImageSetInfo]
    asserts.equals(env, ["gfx110X-dgpu"], [i.arch for i in info.images])
    asserts.equals(env, [], info.left_out)
    return analysistest.end(env)

family_set_test = analysistest.make(_family_set_impl)

def _bad_family_fails_impl(ctx):
    """A bad family name fails analysis in one line (errors.bzl's analysis_error; the table above has the message)."""
    env = analysistest.begin(ctx)
    asserts.expect_failure(env, "$(arch=gfx110X) not defined")
    return analysistest.end(env)

bad_family_fails_test = analysistest.make(_bad_family_fails_impl, expect_failure = True)

def _unbuilt_family_fails_impl(ctx):
    """aiter-wheel asked for a family not all CDNA fails analysis in one line."""
    env = analysistest.begin(ctx)
    asserts.expect_failure(env, "$(arch=gfx110X-dgpu) not defined")
    return analysistest.end(env)

unbuilt_family_fails_test = analysistest.make(_unbuilt_family_fails_impl, expect_failure = True)

def _family_sets():
    """image_sets of the real family asked for families (no --define in tests: default_arch)."""
    families = {"gfx110X-dgpu": ["gfx1100", "gfx1101", "gfx1102"], "gfx94X-gfx950-dcgpu": ["gfx942", "gfx950"]}
    image_set(
        name = "rocm_runtime_asked_for_gfx110X_dgpu",
        images = ["//tests/e2e:rocm-runtime.gfx1100", "//tests/e2e:rocm-runtime.gfx110X-dgpu"],
        archs = ["gfx1100", "gfx110X-dgpu"],
        families = families,
        default_arch = "gfx110X-dgpu",
        target = "rocm-runtime",
        tags = ["manual"],
    )
    image_set(
        name = "rocm_runtime_asked_for_gfx110X",
        images = ["//tests/e2e:rocm-runtime.gfx1100", "//tests/e2e:rocm-runtime.gfx110X-dgpu"],
        archs = ["gfx1100", "gfx110X-dgpu"],
        families = families,
        default_arch = "gfx110X",
        target = "rocm-runtime",
        tags = ["manual"],
    )
    image_set(
        name = "aiter_wheel_asked_for_gfx110X_dgpu",
        images = ["//tests/e2e:aiter-wheel.gfx942", "//tests/e2e:aiter-wheel.gfx950", "//tests/e2e:aiter-wheel.gfx94X-gfx950-dcgpu"],
        archs = ["gfx942", "gfx950", "gfx94X-gfx950-dcgpu"],
        families = families,
        default_arch = "gfx110X-dgpu",
        known_archs = ["gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1102"],
        target = "aiter-wheel",
        tags = ["manual"],
    )

# ---- version overrides flow into tagconf -----------------------------------

def _define_overrides_reach_tagconf_impl(ctx):
    """--define KEY=VALUE for catalogue keys and VCS_REF, --image_registry and --cache_registry become tagconf arguments."""
    env = unittest.begin(ctx)
    keys = ["ROCM_VERSION", "PYTORCH_VERSION", "VCS_REF"]
    rows = [
        ("no defines", {}, "gfx950", ["--arch", "gfx950"]),
        ("arch-free", {}, None, []),
        (
            "every kind of define",
            {
                "PYTORCH_VERSION": "2.16.0",
                "UCX_REF": "v1.20.0",
                "VCS_REF": "0123abc",
                "unrelated": "ignored",
            },
            "gfx1201",
            [
                "--arch",
                "gfx1201",
                "--set",
                "PYTORCH_VERSION=2.16.0",
                "--arg",
                "UCX_REF=v1.20.0",
                "--vcs-ref",
                "0123abc",
                "--registry",
                "127.0.0.1:5000/x",
                "--cache-registry",
                "127.0.0.1:5000/c",
            ],
        ),
        ("empty VCS_REF means none", {"VCS_REF": ""}, "gfx950", ["--arch", "gfx950"]),
    ]
    settings = struct(registry = "127.0.0.1:5000/x", cache_registry = "127.0.0.1:5000/c")
    for desc, var, arch, middle in rows:
        given = settings if desc == "every kind of define" else _NO_REGISTRIES
        got = spec_arguments(var, given, "images/catalog.toml", "pytorch", arch, keys, "out.json")
        want = ["--catalog", "images/catalog.toml", "spec", "--target", "pytorch"] + middle + ["--output", "out.json"]
        asserts.equals(env, want, got, desc)

    # --stamp: the status file is read unless --define VCS_REF is given
    stamped = ["--catalog", "c", "spec", "--target", "pytorch"]
    asserts.equals(
        env,
        stamped + ["--status-file", "stable-status.txt", "--output", "o"],
        spec_arguments({}, _NO_REGISTRIES, "c", "pytorch", None, keys, "o", "stable-status.txt"),
        "stamped without --define VCS_REF",
    )
    asserts.equals(
        env,
        stamped + ["--vcs-ref", "0123abc", "--output", "o"],
        spec_arguments({"VCS_REF": "0123abc"}, _NO_REGISTRIES, "c", "pytorch", None, keys, "o", "stable-status.txt"),
        "--define VCS_REF wins over stamping",
    )
    return unittest.end(env)

define_overrides_reach_tagconf_test = unittest.make(_define_overrides_reach_tagconf_impl)

# settings_of(ctx) with neither registry setting given
_NO_REGISTRIES = struct(registry = "", cache_registry = "")

# ---- a target built for some archs only ------------------------------------

def _optional_parent_left_out_impl(ctx):
    """vllm.gfx950 is built with aiter-wheel.gfx950; vllm.gfx1201 without (aiter: gfx942, gfx950)."""
    env = unittest.begin(ctx)
    a = sorted([p.target for p in ctx.attr.a[ImageInfo].parents])
    b = sorted([p.target for p in ctx.attr.b[ImageInfo].parents])
    asserts.equals(env, ["aiter-wheel", "pytorch", "pytorch-run", "torchvision-wheel", "triton-wheel"], a)
    asserts.equals(env, ["pytorch", "pytorch-run", "torchvision-wheel", "triton-wheel"], b)
    return unittest.end(env)

optional_parent_left_out_test = unittest.make(
    _optional_parent_left_out_impl,
    attrs = {
        "a": attr.label(providers = [ImageInfo]),
        "b": attr.label(providers = [ImageInfo]),
    },
)

_NOT_BUILT = "is not built for gfx1201: images/catalog.toml builds aiter-wheel for gfx942, gfx950 only (targets.aiter-wheel.archs); ask for --define arch=gfx942,gfx950"

def _unbuilt_arch_fails_impl(ctx):
    """Asking a target for an arch the catalogue does not build it for fails analysis in one line.

    analysistest sees the tail of that line (errors.bzl's analysis_error);
    not_built_message_test holds the message, .ci/e2e_checks.py the whole line.
    """
    env = analysistest.begin(ctx)
    asserts.expect_failure(env, "$(arch=gfx1201) not defined")
    return analysistest.end(env)

unbuilt_arch_fails_test = analysistest.make(_unbuilt_arch_fails_impl, expect_failure = True)

def _push_all_fails_impl(ctx):
    """`push_all` (and its .plan) is a script that fails in one line: there is no all group (messages_test has the line)."""
    env = analysistest.begin(ctx)
    writes = [a for a in analysistest.target_actions(env) if a.mnemonic == "FileWrite"]
    asserts.equals(env, 1, len(writes))
    script = writes[0].content
    asserts.true(env, "there is no `all` group, on purpose" in script, script)
    asserts.true(env, script.endswith("exit 2\n"), script)
    return analysistest.end(env)

push_all_fails_test = analysistest.make(_push_all_fails_impl)

def _messages_impl(ctx):
    """The one-line errors of unbuilt archs and of push_all name the input, the known values and the fix."""
    env = unittest.begin(ctx)
    asserts.equals(
        env,
        "//tests/e2e:aiter-wheel " + _NOT_BUILT,
        not_built_message("//tests/e2e:aiter-wheel", "images/catalog.toml", "aiter-wheel", ["gfx942", "gfx950"]) % "gfx1201",
    )
    asserts.equals(
        env,
        "//images:push_all.plan: there is no `all` group, on purpose (a target outside every group, e.g. pytorch-test, is never pushed by accident); known groups: default, wheels, serving; push one with bazel run //images:push_default.plan, or one target with bazel run //images:<target>.push.plan",
        no_all_group_message("images", ["default", "wheels", "serving"], ".plan"),
    )
    return unittest.end(env)

messages_test = unittest.make(_messages_impl)

def _unbuilt_arch_left_out_impl(ctx):
    """A group's set leaves that arch out and says why (the push prints it)."""
    env = analysistest.begin(ctx)
    info = analysistest.target_under_test(env)[ImageSetInfo]
    asserts.equals(env, [], info.images)
    asserts.equals(env, [
        "aiter-wheel is not built for gfx1201: images/catalog.toml builds it for gfx942, gfx950 only (targets.aiter-wheel.archs)",
    ], info.left_out)
    return analysistest.end(env)

unbuilt_arch_left_out_test = analysistest.make(_unbuilt_arch_left_out_impl)

def _some_archs_set(name, leave_out):
    """aiter-wheel's set as the family makes it, asked for gfx1201 (no --define in tests)."""
    image_set(
        name = name,
        images = ["//tests/e2e:aiter-wheel.gfx942", "//tests/e2e:aiter-wheel.gfx950"],
        archs = ["gfx942", "gfx950"],
        default_arch = "gfx1201",
        known_archs = ["gfx90a", "gfx942", "gfx950", "gfx1201"],
        target = "aiter-wheel",
        leave_out = leave_out,
        tags = ["manual"],
    )

# ---- label helpers ---------------------------------------------------------

def _label_helpers_impl(ctx):
    """Catalogue names appear verbatim in labels, with `.arch` for arch variants."""
    env = unittest.begin(ctx)
    rows = [
        (image_label("pytorch-wheel", "gfx950"), "pytorch-wheel.gfx950"),
        (image_label("triton-wheel", None), "triton-wheel"),
        (dockerfile_label("docker/Dockerfile.base"), "//docker:Dockerfile.base"),
        (dockerfile_label("docker/Dockerfile.base", "tests/e2e/docker"), "//tests/e2e/docker:Dockerfile.base"),
        (
            image_labels(_TARGETS, ["aiter-wheel", "triton-wheel", "vllm"], ["gfx950", "gfx1201"]),
            ["aiter-wheel.gfx950", "triton-wheel", "vllm.gfx950", "vllm.gfx1201"],
        ),
    ]
    for got, want in rows:
        asserts.equals(env, want, got)
    return unittest.end(env)

label_helpers_test = unittest.make(_label_helpers_impl)

# The shape of targets.bzl's TARGETS, reduced to what image_labels reads.
_TARGETS = {
    "aiter-wheel": {"arch": True, "archs": ["gfx942", "gfx950"]},
    "triton-wheel": {"arch": False, "archs": []},
    "vllm": {"arch": True, "archs": ["gfx942", "gfx950", "gfx1201"]},
}

def image_test_suite(name):
    """Declares the image rule's analysis tests.

    Args:
      name: name of the test suite.
    """
    e2e = "//tests/e2e:"
    pinned_arch_reaches_the_build_test(
        name = "pinned_arch_reaches_the_build_test",
        target_under_test = e2e + "rocm-runtime.gfx1201",
    )
    build_log_is_the_output_bases_test(
        name = "build_log_is_the_output_bases_test",
        target_under_test = e2e + "rocm-runtime.gfx1201",
    )
    arch_free_target_has_no_arch_test(
        name = "arch_free_target_has_no_arch_test",
        target_under_test = e2e + "triton-wheel",
    )
    arch_free_parent_is_shared_test(
        name = "arch_free_parent_is_shared_test",
        a = e2e + "pytorch.gfx950",
        b = e2e + "pytorch.gfx1201",
    )
    image_set_default_arch_test(
        name = "image_set_default_arch_test",
        target_under_test = e2e + "pytorch",
    )
    optional_parent_left_out_test(
        name = "optional_parent_left_out_test",
        a = e2e + "vllm.gfx950",
        b = e2e + "vllm.gfx1201",
    )
    _some_archs_set("aiter_wheel_asked_for_gfx1201", leave_out = False)
    unbuilt_arch_fails_test(
        name = "unbuilt_arch_fails_test",
        target_under_test = ":aiter_wheel_asked_for_gfx1201",
    )
    _some_archs_set("aiter_wheel_in_a_group_for_gfx1201", leave_out = True)
    unbuilt_arch_left_out_test(
        name = "unbuilt_arch_left_out_test",
        target_under_test = ":aiter_wheel_in_a_group_for_gfx1201",
    )
    push_all_fails_test(
        name = "push_all_fails_test",
        target_under_test = e2e + "push_all",
    )
    push_all_fails_test(
        name = "push_all_plan_fails_test",
        target_under_test = e2e + "push_all.plan",
    )
    messages_test(name = "messages_test")
    arch_request_parsing_test(name = "arch_request_parsing_test")
    family_request_parsing_test(name = "family_request_parsing_test")
    close_archs_test(name = "close_archs_test")
    stale_targets_bzl_test(name = "stale_targets_bzl_test")
    catalog_names_test(name = "catalog_names_test")
    catalog_names_of_the_catalogue_test(name = "catalog_names_of_the_catalogue_test")
    define_check_error_test(name = "define_check_error_test")
    define_check_fails_test(
        name = "define_check_fails_test",
        target_under_test = ":define_check_gfx951",
    )
    define_check_stale_test(
        name = "define_check_stale_test",
        target_under_test = ":define_check_stale",
    )
    define_check_passes_test(
        name = "define_check_passes_test",
        target_under_test = "//images:defines",
    )
    report_help_is_the_reports_test(
        name = "report_help_is_the_reports_test",
        target_under_test = "//tests/e2e:report.help",
    )
    family_reaches_the_build_test(
        name = "family_reaches_the_build_test",
        target_under_test = "//tests/e2e:rocm-runtime.gfx110X-dgpu",
    )
    family_parents_test(
        name = "family_parents_test",
        cdna = "//tests/e2e:vllm.gfx94X-gfx950-dcgpu",
        rdna = "//tests/e2e:vllm.gfx110X-all",
    )
    _family_sets()
    family_set_test(
        name = "family_set_test",
        target_under_test = ":rocm_runtime_asked_for_gfx110X_dgpu",
    )
    bad_family_fails_test(
        name = "bad_family_fails_test",
        target_under_test = ":rocm_runtime_asked_for_gfx110X",
    )
    unbuilt_family_fails_test(
        name = "unbuilt_family_fails_test",
        target_under_test = ":aiter_wheel_asked_for_gfx110X_dgpu",
    )
    define_overrides_reach_tagconf_test(name = "define_overrides_reach_tagconf_test")
    label_helpers_test(name = "label_helpers_test")
    define_checks_test(name = "define_checks_test")
    builders_parsing_test(name = "builders_parsing_test")
    settings_reach_the_build_test(
        name = "settings_reach_the_build_test",
        target_under_test = e2e + "rocm-runtime.gfx1201",
    )
    for test_name, test, subject in [
        ("bad_upstream_fails_test", bad_upstream_fails_test, "upstream=rehersal"),
        ("bad_registry_fails_test", bad_registry_fails_test, "image_registry=h:5/UP"),
        ("bad_staging_fails_test", bad_staging_fails_test, "staging=h:5000"),
        ("bad_builders_fails_test", bad_builders_fails_test, "builders=gfx951=a"),
    ]:
        test(name = test_name, target_under_test = e2e + "rocm-runtime.gfx1201", subject = "$(%s) not defined" % subject)
    native.test_suite(
        name = name,
        tests = [
            ":pinned_arch_reaches_the_build_test",
            ":build_log_is_the_output_bases_test",
            ":define_checks_test",
            ":builders_parsing_test",
            ":settings_reach_the_build_test",
            ":bad_upstream_fails_test",
            ":bad_registry_fails_test",
            ":bad_staging_fails_test",
            ":bad_builders_fails_test",
            ":arch_free_target_has_no_arch_test",
            ":arch_free_parent_is_shared_test",
            ":image_set_default_arch_test",
            ":optional_parent_left_out_test",
            ":unbuilt_arch_fails_test",
            ":unbuilt_arch_left_out_test",
            ":push_all_fails_test",
            ":push_all_plan_fails_test",
            ":messages_test",
            ":arch_request_parsing_test",
            ":family_request_parsing_test",
            ":close_archs_test",
            ":stale_targets_bzl_test",
            ":catalog_names_test",
            ":catalog_names_of_the_catalogue_test",
            ":define_check_error_test",
            ":define_check_fails_test",
            ":define_check_stale_test",
            ":define_check_passes_test",
            ":report_help_is_the_reports_test",
            ":family_reaches_the_build_test",
            ":family_parents_test",
            ":family_set_test",
            ":bad_family_fails_test",
            ":unbuilt_family_fails_test",
            ":define_overrides_reach_tagconf_test",
            ":label_helpers_test",
        ],
    )

# ---- --define keys are checked at analysis; the other knobs are settings -----

_VALUE_KEYS = ["ROCM_VERSION", "PYTORCH_VERSION", "VCS_REF"]

_MOVED_FLAGS = "--attest, --builders, --cache_registry, --heavy_dockerfile, --image_registry, --reproducible, --sign, --staging, --upstream"

_KNOWN_KEYS = "arch, the catalogue's upper-case keys (ROCM_VERSION, PYTORCH_VERSION, VCS_REF) and optional build args; the other settings are flags (%s)" % _MOVED_FLAGS

_OPTIONAL = "AITER_REF, FLASH_ATTN_REF, SCCACHE_VERSION, TRITON_KERNELS_REF, UCX_REF"

def _define_checks_impl(ctx):
    """Misspelled, unknown and moved --define keys fail analysis, naming the fix."""
    env = unittest.begin(ctx)
    builtins = {"BINDIR": "x", "COMPILATION_MODE": "fastbuild", "GENDIR": "x", "TARGET_CPU": "k8"}
    key_rows = [
        ("catalogue key", {"PYTORCH_VERSION": "2.16.0"}, None),
        ("Bazel's own variables", builtins, None),
        ("the one lower-case key", {"arch": "gfx950"}, None),
        (
            "any other lower-case key: Bazel would ignore it",
            {"absl": "1"},
            "--define absl=1: unknown key absl; known keys: %s" % _KNOWN_KEYS,
        ),
        (
            "group: not a define, a target",
            {"group": "nosuch"},
            "--define group=nosuch: unknown key group; known keys: %s; a group is pushed by its own target, e.g. bazel run //images:push_default (no --define)" % _KNOWN_KEYS,
        ),
        (
            "misspelled catalogue key",
            {"PYTORCH_VERION": "2.16.0"},
            "--define PYTORCH_VERION=2.16.0: PYTORCH_VERION is neither a catalogue key nor an optional build arg; did you mean PYTORCH_VERSION? (keys: ROCM_VERSION, PYTORCH_VERSION, VCS_REF; optional build args: %s)" % _OPTIONAL,
        ),
        (
            "unknown upper-case key, nothing close",
            {"FOO": "1"},
            "--define FOO=1: FOO is neither a catalogue key nor an optional build arg; (keys: ROCM_VERSION, PYTORCH_VERSION, VCS_REF; optional build args: %s)" % _OPTIONAL,
        ),
        ("optional build arg", {"UCX_REF": "v1.20.0"}, None),
        (
            "misspelled optional build arg",
            {"UCX_RF": "v1.20.0"},
            "--define UCX_RF=v1.20.0: UCX_RF is neither a catalogue key nor an optional build arg; did you mean UCX_REF? (keys: ROCM_VERSION, PYTORCH_VERSION, VCS_REF; optional build args: %s)" % _OPTIONAL,
        ),
        ("misspelled lower-case key", {"acrh": "gfx950"}, "--define acrh=gfx950: unknown key acrh; did you mean arch? known keys: %s" % _KNOWN_KEYS),
        ("misspelled moved key: its flag", {"regsitry": "h/n"}, "--define regsitry=h/n: unknown key regsitry; did you mean --image_registry? known keys: %s" % _KNOWN_KEYS),
        ("misspelled switch: its flag", {"reproducibel": "1"}, "--define reproducibel=1: unknown key reproducibel; did you mean --reproducible? known keys: %s" % _KNOWN_KEYS),
    ]
    for desc, var, want in key_rows:
        asserts.equals(env, want, unknown_define_error(var, _VALUE_KEYS), desc)

    # the knobs that are build settings now: refused, naming the flag to write
    moved_rows = [
        ({"sign": "1"}, "--define sign=1: sign is a build setting now; write --sign"),
        ({"attest": "0"}, "--define attest=0: attest is a build setting now; write --noattest"),
        ({"reproducible": "yes"}, "--define reproducible=yes: reproducible is a build setting now; write --reproducible or --noreproducible"),
        ({"registry": "h:5000/team"}, "--define registry=h:5000/team: registry is a build setting now; write --image_registry=h:5000/team"),
        ({"cache_registry": "h/c"}, "--define cache_registry=h/c: cache_registry is a build setting now; write --cache_registry=h/c"),
        ({"staging": "embedded"}, "--define staging=embedded: staging is a build setting now; write --staging=embedded"),
        ({"builders": "*=farm"}, "--define builders=*=farm: builders is a build setting now; write --builders=*=farm"),
        ({"upstream": "rehearsal"}, "--define upstream=rehearsal: upstream is a build setting now; write --upstream=rehearsal"),
        ({"heavy_dockerfile": "overlap"}, "--define heavy_dockerfile=overlap: heavy_dockerfile is a build setting now; write --heavy_dockerfile=overlap"),
    ]
    for var, want in moved_rows:
        asserts.equals(env, want, unknown_define_error(var, _VALUE_KEYS))

    # defines_error: the first problem, or None
    all_rows = [
        ("nothing given", {}, None),
        ("all good", {"arch": "gfx950", "PYTORCH_VERSION": "2.16.0", "UPSTREAM_IMAGE": "rocm/dev"}, None),
        ("unknown key first", {"group": "x", "UPSTREAM_IMAGE": "R"}, "--define group=x: unknown key group"),
        ("bad upstream image", {"UPSTREAM_IMAGE": "rocm/dev:7"}, "--define UPSTREAM_IMAGE=rocm/dev:7: image reference"),
    ]
    for desc, var, want in all_rows:
        got = defines_error(var, _VALUE_KEYS + ["UPSTREAM_IMAGE"])
        if want == None:
            asserts.equals(env, None, got, desc)
        else:
            asserts.true(env, got != None and got.startswith(want), "%s: %r" % (desc, got))

    example = "; give HOST[:PORT]/NAMESPACE, e.g. registry.example.com:5000/rocm-pytorch"
    flag = "--image_registry"
    registry_rows = [
        ("host and namespace", "127.0.0.1:5003/rocm-pytorch", False, None),
        ("nested namespace", "registry.example.com/a/b-c__d.e", False, None),
        ("https forced", "https://127.0.0.1:5000/ns", False, None),
        ("upper case", "127.0.0.1:5003/UP", False, flag + "=127.0.0.1:5003/UP: bad namespace component \"UP\": repository paths are lowercase (write \"up\")" + example),
        ("empty host", "//ns", False, flag + "=//ns: bad host \"\"" + example),
        ("space", "re l", False, flag + "=re l: bad host \"re l\"" + example),
        ("leading dash", "-bad", False, flag + "=-bad: bad host \"-bad\"" + example),
        ("bad port", "h:50x0/ns", False, flag + "=h:50x0/ns: bad port \"50x0\"" + example),
        ("triple underscore", "h/a___b", False, flag + "=h/a___b: bad namespace component \"a___b\"" + example),
        ("empty", "", False, flag + "=: empty; give HOST[:PORT]/NAMESPACE, e.g. registry.example.com:5000/rocm-pytorch"),
        ("credentials", "alice:pw@h/x", False, flag + "=...: credentials in a registry string end up in logs; remove them and log in with `docker login HOST`"),
        ("staging needs a prefix", "h:5000", True, flag + "=h:5000: no namespace" + example),
        ("blanks", " h/ns ", False, flag + "=\" h/ns \": blanks around the registry; write \"h/ns\" (no blanks)"),
        ("upper-case scheme", "HTTPS://h/ns", False, None),
        ("trailing slash", "127.0.0.1:5000/team/", False, flag + "=127.0.0.1:5000/team/: ends with '/'; write --image_registry=127.0.0.1:5000/team"),
        ("trailing slashes", "https://h:5000//", False, flag + "=https://h:5000//: ends with '/'; write --image_registry=https://h:5000"),
        ("trailing slash, no namespace", "h:5000/", True, flag + "=h:5000/: no namespace" + example),
    ]
    for desc, value, need_namespace, want in registry_rows:
        asserts.equals(env, want, registry_error(flag, value, need_namespace), desc)

    # `--define UPSTREAM_IMAGE=`: a repository (Docker Hub's short names too), no tag
    for taken in ["rocm/dev-ubuntu-26.04", "ubuntu", "mirror.example.internal/rocm/dev-ubuntu-26.04", "127.0.0.1:5000/rocm/dev"]:
        asserts.equals(env, None, upstream_image_error(taken), taken)
    asserts.equals(
        env,
        "--define UPSTREAM_IMAGE=rocm/dev:9.8.7-full: image reference \"rocm/dev:9.8.7-full\": a tag or digest (its tag is ROCM_VERSION); give [REGISTRY/]REPOSITORY, e.g. mirror.example.internal/rocm/dev-ubuntu-26.04",
        upstream_image_error("rocm/dev:9.8.7-full"),
    )
    asserts.equals(
        env,
        "--define UPSTREAM_IMAGE=Rocm/dev: image reference \"Rocm/dev\": bad repository component \"Rocm\": repository paths are lowercase (write \"rocm\"); give [REGISTRY/]REPOSITORY, e.g. mirror.example.internal/rocm/dev-ubuntu-26.04",
        upstream_image_error("Rocm/dev"),
    )
    asserts.equals(env, [], mode_arguments(False), "no --reproducible: BuildKit's plain output")
    asserts.equals(env, ["--reproducible"], mode_arguments(True))
    return unittest.end(env)

define_checks_test = unittest.make(_define_checks_impl)

# ---- --builders=ARCH=BUILDER,... ---------------------------------------------

_ARCHS = ["gfx942", "gfx950", "gfx1201"]

def _builders_parsing_impl(ctx):
    """`--builders=` parses to {arch: builder}; bad maps fail naming the fix."""
    env = unittest.begin(ctx)
    ok_rows = [
        ("unset: the local engine", "", {}),
        ("one arch", "gfx1201=hostb", {"gfx1201": "hostb"}),
        ("default and noarch", "*=farm, noarch=hosta,gfx950=k8s.pool-1", {"*": "farm", "noarch": "hosta", "gfx950": "k8s.pool-1"}),
    ]
    for desc, value, want in ok_rows:
        parsed = parse_builders(value, _ARCHS)
        asserts.equals(env, None, parsed.error, desc)
        asserts.equals(env, want, parsed.builders, desc)
    where = "--builders="
    error_rows = [
        ("no =", "hostb", where + "hostb: \"hostb\" is not ARCH=BUILDER; e.g. gfx1201=host-b,*=host-a"),
        ("no builder", "gfx950=", where + "gfx950=: \"gfx950=\" is not ARCH=BUILDER; e.g. gfx1201=host-b,*=host-a"),
        ("misspelled arch", "gfx1021=hostb", where + "gfx1021=hostb: unknown arch \"gfx1021\"; did you mean gfx1201? known: gfx942, gfx950, gfx1201, * (every other arch), noarch (arch-free targets)"),
        ("twice", "gfx950=a,gfx950=b", where + "gfx950=a,gfx950=b: gfx950 is given twice (a and b)"),
        ("bad name", "gfx950=ssh://h", where + "gfx950=ssh://h: \"ssh://h\" is not a builder or docker context name (letters, digits, _.+-)"),
    ]
    for desc, value, want in error_rows:
        asserts.equals(env, want, parse_builders(value, _ARCHS).error, desc)

    # which builder an image gets
    builders = {"gfx1201": "hostb", "*": "farm"}
    asserts.equals(env, "hostb", builder_for(builders, "gfx1201"))
    asserts.equals(env, "farm", builder_for(builders, "gfx950"), "* is the default")
    asserts.equals(env, "farm", builder_for(builders, None), "arch-free targets fall back to *")
    asserts.equals(env, "hosta", builder_for({"noarch": "hosta", "*": "farm"}, None))
    asserts.equals(env, "", builder_for({"gfx1201": "hostb"}, "gfx950"), "unmapped: local engine")
    asserts.equals(env, "", builder_for({}, "gfx950"), "unset: local engine")
    return unittest.end(env)

builders_parsing_test = unittest.make(_builders_parsing_impl)

# ---- the settings reach the actions (a transition sets them, as the flags do) --

_BUILDERS = str(Label("//images/settings:builders"))
_REPRODUCIBLE = str(Label("//images/settings:reproducible"))
_STAGING = str(Label("//images/settings:staging"))
_REGISTRY = str(Label("//images/settings:registry"))
_UPSTREAM = str(Label("//images/settings:upstream"))

def _settings_reach_the_build_impl(ctx):
    """--builders, --reproducible and --staging reach the ImageBuild action; --image_registry the ImageSpec."""
    env = analysistest.begin(ctx)
    build = _action(env, "ImageBuild").argv
    asserts.equals(env, "hostb", _flag(build, "--builder"), "--builders=gfx1201=hostb")
    asserts.true(env, "--reproducible" in build, "--reproducible")
    asserts.equals(env, "127.0.0.1:5999/team", _flag(build, "--staging"))
    spec = _action(env, "ImageSpec").argv
    asserts.equals(env, "127.0.0.1:5000/elsewhere", _flag(spec, "--registry"))
    return analysistest.end(env)

settings_reach_the_build_test = analysistest.make(
    _settings_reach_the_build_impl,
    config_settings = {
        _BUILDERS: "gfx1201=hostb,*=farm",
        _REPRODUCIBLE: True,
        _STAGING: "127.0.0.1:5999/team",
        _REGISTRY: "127.0.0.1:5000/elsewhere",
    },
)

def _bad_setting_fails_impl(ctx):
    """A bad value of a setting fails analysis in one line (the subject is the flag's KEY=VALUE)."""
    env = analysistest.begin(ctx)
    asserts.expect_failure(env, ctx.attr.subject)
    return analysistest.end(env)

def _bad_setting_test(setting, value):
    return analysistest.make(
        _bad_setting_fails_impl,
        expect_failure = True,
        config_settings = {setting: value},
        attrs = {"subject": attr.string()},
    )

bad_upstream_fails_test = _bad_setting_test(_UPSTREAM, "rehersal")
bad_registry_fails_test = _bad_setting_test(_REGISTRY, "h:5/UP")
bad_staging_fails_test = _bad_setting_test(_STAGING, "h:5000")
bad_builders_fails_test = _bad_setting_test(_BUILDERS, "gfx951=a")
