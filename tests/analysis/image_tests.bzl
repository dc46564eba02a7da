"""Analysis tests of the image rule, the arch transition and image_set."""

load("@bazel_skylib//lib:unittest.bzl", "analysistest", "asserts", "unittest")
load("//images:defs.bzl", "ImageInfo", "ImageSetInfo", "image_set")

# buildifier: disable=bzl-visibility
load("//images/private:arch_transition.bzl", "parse_arch_request")

# buildifier: disable=bzl-visibility
load("//images/private:defines.bzl", "builder_for", "defines_error", "flag_error", "parse_builders", "registry_error", "unknown_define_error", "upstream_error", "upstream_image_error", "value_error")

# buildifier: disable=bzl-visibility
load("//images/private:family.bzl", "dockerfile_label", "image_label", "image_labels", "no_all_group_message")

# buildifier: disable=bzl-visibility
load("//images/private:image.bzl", "mode_arguments", "spec_arguments")

# buildifier: disable=bzl-visibility
load("//images/private:image_set.bzl", "not_built_message")

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

def _arch_request_parsing_impl(ctx):
    """`--define arch=` values: order kept, duplicates dropped, unknown ones name the known list."""
    env = unittest.begin(ctx)
    rows = [
        ("one arch", "gfx950", ["gfx950"], None),
        ("two archs in the given order", "gfx1201,gfx950", ["gfx1201", "gfx950"], None),
        ("spaces and duplicates", "gfx950, gfx950 ,gfx942", ["gfx950", "gfx942"], None),
        ("unknown arch", "gfx951", [], "--define arch=gfx951: unknown arch \"gfx951\"; known: gfx90a, gfx942, gfx950, gfx1201 (or all)"),
        ("unknown among known", "gfx950,gfx12O1", [], "--define arch=gfx950,gfx12O1: unknown arch \"gfx12O1\"; known: gfx90a, gfx942, gfx950, gfx1201 (or all)"),
        ("empty entry", "gfx950,", [], "--define arch=gfx950,: unknown arch \"\"; known: gfx90a, gfx942, gfx950, gfx1201 (or all)"),
        ("all is every known arch, in catalogue order", "all", _KNOWN, None),
        ("all inside a list is not an arch", "gfx950,all", [], "--define arch=gfx950,all: unknown arch \"all\"; known: gfx90a, gfx942, gfx950, gfx1201 (or all)"),
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
            "--define arch=gfx110X: unknown arch or family \"gfx110X\"; did you mean \"gfx110X-all\"? " + _FAMILY_LIST,
        ),
        (
            "a miscased family",
            "gfx110x-all",
            [],
            "--define arch=gfx110x-all: unknown arch or family \"gfx110x-all\"; did you mean \"gfx110X-all\"? " + _FAMILY_LIST,
        ),
        (
            "an unknown name in a list",
            "gfx110X-all,gfx120X-all",
            [],
            "--define arch=gfx110X-all,gfx120X-all: unknown arch or family \"gfx120X-all\"; " + _FAMILY_LIST,
        ),
    ]
    for desc, spec, archs, error in rows:
        got = parse_arch_request(spec, _FAMILY_KNOWN, _FAMILIES)
        asserts.equals(env, archs, got.archs, desc)
        asserts.equals(env, error, got.error, desc)
    return unittest.end(env)

family_request_parsing_test = unittest.make(_family_request_parsing_impl)

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
    """A bad family name fails analysis in one line (defines.bzl's analysis_error; the table above has the message)."""
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
    """--define KEY=VALUE for catalogue keys, VCS_REF, registry and cache_registry become tagconf arguments."""
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
                "registry": "127.0.0.1:5000/x",
                "cache_registry": "127.0.0.1:5000/c",
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
    for desc, var, arch, middle in rows:
        got = spec_arguments(var, "images/catalog.toml", "pytorch", arch, keys, "out.json")
        want = ["--catalog", "images/catalog.toml", "spec", "--target", "pytorch"] + middle + ["--output", "out.json"]
        asserts.equals(env, want, got, desc)

    # --stamp: the status file is read unless --define VCS_REF is given
    stamped = ["--catalog", "c", "spec", "--target", "pytorch"]
    asserts.equals(
        env,
        stamped + ["--status-file", "stable-status.txt", "--output", "o"],
        spec_arguments({}, "c", "pytorch", None, keys, "o", "stable-status.txt"),
        "stamped without --define VCS_REF",
    )
    asserts.equals(
        env,
        stamped + ["--vcs-ref", "0123abc", "--output", "o"],
        spec_arguments({"VCS_REF": "0123abc"}, "c", "pytorch", None, keys, "o", "stable-status.txt"),
        "--define VCS_REF wins over stamping",
    )
    return unittest.end(env)

define_overrides_reach_tagconf_test = unittest.make(_define_overrides_reach_tagconf_impl)

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

    analysistest sees the tail of that line (defines.bzl's analysis_error);
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
    reproducible_define_test(name = "reproducible_define_test")
    upstream_define_test(name = "upstream_define_test")
    builders_parsing_test(name = "builders_parsing_test")
    native.test_suite(
        name = name,
        tests = [
            ":pinned_arch_reaches_the_build_test",
            ":build_log_is_the_output_bases_test",
            ":define_checks_test",
            ":reproducible_define_test",
            ":upstream_define_test",
            ":builders_parsing_test",
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
            ":family_reaches_the_build_test",
            ":family_parents_test",
            ":family_set_test",
            ":bad_family_fails_test",
            ":unbuilt_family_fails_test",
            ":define_overrides_reach_tagconf_test",
            ":label_helpers_test",
        ],
    )

# ---- --define keys and registry strings are checked at analysis -------------

_VALUE_KEYS = ["ROCM_VERSION", "PYTORCH_VERSION", "VCS_REF"]

def _define_checks_impl(ctx):
    """Misspelled --define keys and bad registry strings fail analysis, naming the fix."""
    env = unittest.begin(ctx)
    builtins = {"BINDIR": "x", "COMPILATION_MODE": "fastbuild", "GENDIR": "x", "TARGET_CPU": "k8"}
    key_rows = [
        ("catalogue key", {"PYTORCH_VERSION": "2.16.0"}, None),
        ("Bazel's own variables", builtins, None),
        ("our lower-case keys", {"arch": "gfx950", "registry": "h/n", "staging": "embedded"}, None),
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
        ("bench/heavy's key", {"heavy_dockerfile": "overlap"}, None),
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
        ("misspelled lower-case key", {"regsitry": "h/n"}, "--define regsitry=h/n: unknown key regsitry; did you mean registry? known keys: %s" % _KNOWN_KEYS),
    ]
    for desc, var, want in key_rows:
        asserts.equals(env, want, unknown_define_error(var, _VALUE_KEYS), desc)

    value_rows = [
        ("known value", {"heavy_dockerfile": "overlap"}, None),
        ("unknown value", {"heavy_dockerfile": "nope"}, "--define heavy_dockerfile=nope: unknown value; known: family, overlap (or leave heavy_dockerfile out)"),
    ]
    for desc, var, want in value_rows:
        asserts.equals(env, want, value_error(var), desc)

    # defines_error: the first problem of all the checks, or None
    all_rows = [
        ("nothing given", {}, None),
        ("all good", {"arch": "gfx950", "registry": "h/n", "sign": "1", "upstream": "rehearsal"}, None),
        ("unknown key first", {"group": "x", "sign": "yes"}, "--define group=x: unknown key group"),
        ("bad value of a closed list", {"heavy_dockerfile": "nope"}, "--define heavy_dockerfile=nope: unknown value"),
        ("bad switch", {"sign": "yes"}, "--define sign=yes: want sign=1 or sign=0"),
        ("bad upstream", {"upstream": "x"}, "--define upstream=x: unknown stand-in upstream"),
        ("bad builders", {"builders": "x"}, "--define builders=x: \"x\" is not ARCH=BUILDER"),
        ("bad staging", {"staging": "h:5000"}, "--define staging=h:5000: no namespace"),
        ("bad cache registry", {"cache_registry": "h/UP"}, "--define cache_registry=h/UP: bad namespace component"),
    ]
    for desc, var, want in all_rows:
        got = defines_error(var, _VALUE_KEYS, _ARCHS)
        if want == None:
            asserts.equals(env, None, got, desc)
        else:
            asserts.true(env, got != None and got.startswith(want), "%s: %r" % (desc, got))

    example = "; give HOST[:PORT]/NAMESPACE, e.g. registry.example.com:5000/rocm-pytorch"
    registry_rows = [
        ("host and namespace", "127.0.0.1:5003/rocm-pytorch", False, None),
        ("nested namespace", "registry.example.com/a/b-c__d.e", False, None),
        ("https forced", "https://127.0.0.1:5000/ns", False, None),
        ("upper case", "127.0.0.1:5003/UP", False, "--define registry=127.0.0.1:5003/UP: bad namespace component \"UP\": repository paths are lowercase (write \"up\")" + example),
        ("empty host", "//ns", False, "--define registry=//ns: bad host \"\"" + example),
        ("space", "re l", False, "--define registry=re l: bad host \"re l\"" + example),
        ("leading dash", "-bad", False, "--define registry=-bad: bad host \"-bad\"" + example),
        ("bad port", "h:50x0/ns", False, "--define registry=h:50x0/ns: bad port \"50x0\"" + example),
        ("triple underscore", "h/a___b", False, "--define registry=h/a___b: bad namespace component \"a___b\"" + example),
        ("empty", "", False, "--define registry=: empty; give HOST[:PORT]/NAMESPACE, e.g. registry.example.com:5000/rocm-pytorch"),
        ("credentials", "alice:pw@h/x", False, "--define registry=...: credentials in a registry string end up in logs; remove them and log in with `docker login HOST`"),
        ("staging needs a prefix", "h:5000", True, "--define registry=h:5000: no namespace" + example),
        ("blanks", " h/ns ", False, "--define registry=\" h/ns \": blanks around the registry; write \"h/ns\" (no blanks)"),
        ("upper-case scheme", "HTTPS://h/ns", False, None),
    ]
    for desc, value, need_namespace, want in registry_rows:
        asserts.equals(env, want, registry_error("registry", value, need_namespace), desc)
    return unittest.end(env)

define_checks_test = unittest.make(_define_checks_impl)

_KNOWN_KEYS = "arch, attest, builders, cache_registry, heavy_dockerfile, registry, reproducible, sign, staging, upstream, the catalogue's upper-case keys (ROCM_VERSION, PYTORCH_VERSION, VCS_REF) and optional build args"

_OPTIONAL = "AITER_REF, FLASH_ATTN_REF, SCCACHE_VERSION, TRITON_KERNELS_REF, UCX_REF"

def _reproducible_define_impl(ctx):
    """`--define reproducible=1` (--config=release) passes --reproducible; 0 or none: plain output."""
    env = unittest.begin(ctx)
    asserts.equals(env, [], mode_arguments({}), "no define: BuildKit's plain output")
    asserts.equals(env, [], mode_arguments({"reproducible": "0"}), "reproducible=0")
    asserts.equals(env, ["--reproducible"], mode_arguments({"reproducible": "1"}), "reproducible=1")
    asserts.equals(env, None, unknown_define_error({"reproducible": "1"}, _VALUE_KEYS), "a known key")
    asserts.equals(
        env,
        "--define reproducibel=1: unknown key reproducibel; did you mean reproducible? known keys: " + _KNOWN_KEYS,
        unknown_define_error({"reproducibel": "1"}, _VALUE_KEYS),
    )
    asserts.equals(env, None, flag_error({"reproducible": "1"}, "reproducible"))
    asserts.equals(
        env,
        "--define reproducible=yes: want reproducible=1 or reproducible=0",
        flag_error({"reproducible": "yes"}, "reproducible"),
    )
    return unittest.end(env)

reproducible_define_test = unittest.make(_reproducible_define_impl)

def _upstream_define_impl(ctx):
    """`--define upstream=` names a stand-in upstream (--config=rehearsal) or fails naming them."""
    env = unittest.begin(ctx)
    asserts.equals(env, None, upstream_error("rehearsal"))
    asserts.equals(env, None, unknown_define_error({"upstream": "rehearsal"}, _VALUE_KEYS))
    asserts.equals(
        env,
        "--define upstream=rehersal: unknown stand-in upstream; known: rehearsal (//images/rehearsal:upstream) (--config=rehearsal sets it), or leave it out to pull UPSTREAM_IMAGE:ROCM_VERSION",
        upstream_error("rehersal"),
    )
    asserts.equals(
        env,
        "--define upstrem=rehearsal: unknown key upstrem; did you mean upstream? known keys: " + _KNOWN_KEYS,
        unknown_define_error({"upstrem": "rehearsal"}, _VALUE_KEYS),
    )

    # `--define UPSTREAM_IMAGE=`: a repository (Docker Hub's short names too), no tag
    for taken in ["rocm/dev-ubuntu-26.04", "ubuntu", "mirror.example.internal/rocm/dev-ubuntu-26.04", "127.0.0.1:5000/rocm/dev"]:
        asserts.equals(env, None, upstream_image_error(taken), taken)
    asserts.equals(
        env,
        "--define UPSTREAM_IMAGE=rocm/dev:10.1.0-full: image reference \"rocm/dev:10.1.0-full\": a tag or digest (its tag is ROCM_VERSION); give [REGISTRY/]REPOSITORY, e.g. mirror.example.internal/rocm/dev-ubuntu-26.04",
        upstream_image_error("rocm/dev:10.1.0-full"),
    )
    asserts.equals(
        env,
        "--define UPSTREAM_IMAGE=Rocm/dev: image reference \"Rocm/dev\": bad repository component \"Rocm\": repository paths are lowercase (write \"rocm\"); give [REGISTRY/]REPOSITORY, e.g. mirror.example.internal/rocm/dev-ubuntu-26.04",
        upstream_image_error("Rocm/dev"),
    )
    return unittest.end(env)

upstream_define_test = unittest.make(_upstream_define_impl)

# ---- --define builders=ARCH=BUILDER,... -------------------------------------

_ARCHS = ["gfx942", "gfx950", "gfx1201"]

def _builders_parsing_impl(ctx):
    """`--define builders=` parses to {arch: builder}; bad maps fail naming the fix."""
    env = unittest.begin(ctx)
    ok_rows = [
        ("one arch", "gfx1201=hostb", {"gfx1201": "hostb"}),
        ("default and noarch", "*=farm, noarch=hosta,gfx950=k8s.pool-1", {"*": "farm", "noarch": "hosta", "gfx950": "k8s.pool-1"}),
    ]
    for desc, value, want in ok_rows:
        parsed = parse_builders(value, _ARCHS)
        asserts.equals(env, None, parsed.error, desc)
        asserts.equals(env, want, parsed.builders, desc)
    where = "--define builders="
    error_rows = [
        ("empty", "", where + ": empty; give ARCH=BUILDER[,ARCH=BUILDER...], e.g. gfx1201=host-b,*=host-a"),
        ("no =", "hostb", where + "hostb: \"hostb\" is not ARCH=BUILDER; e.g. gfx1201=host-b,*=host-a"),
        ("no builder", "gfx950=", where + "gfx950=: \"gfx950=\" is not ARCH=BUILDER; e.g. gfx1201=host-b,*=host-a"),
        ("misspelled arch", "gfx1021=hostb", where + "gfx1021=hostb: unknown arch \"gfx1021\"; did you mean gfx1201? known: gfx942, gfx950, gfx1201, * (every other arch), noarch (arch-free targets)"),
        ("twice", "gfx950=a,gfx950=b", where + "gfx950=a,gfx950=b: gfx950 is given twice (a and b)"),
        ("bad name", "gfx950=ssh://h", where + "gfx950=ssh://h: \"ssh://h\" is not a builder or docker context name (letters, digits, _.+-)"),
    ]
    for desc, value, want in error_rows:
        asserts.equals(env, want, parse_builders(value, _ARCHS).error, desc)

    # which builder an image gets
    var = {"builders": "gfx1201=hostb,*=farm"}
    asserts.equals(env, "hostb", builder_for(var, "gfx1201"))
    asserts.equals(env, "farm", builder_for(var, "gfx950"), "* is the default")
    asserts.equals(env, "farm", builder_for(var, None), "arch-free targets fall back to *")
    asserts.equals(env, "hosta", builder_for({"builders": "noarch=hosta,*=farm"}, None))
    asserts.equals(env, "", builder_for({"builders": "gfx1201=hostb"}, "gfx950"), "unmapped: local engine")
    asserts.equals(env, "", builder_for({}, "gfx950"), "unset: local engine")
    asserts.equals(env, None, unknown_define_error({"builders": "gfx950=a"}, _VALUE_KEYS))
    return unittest.end(env)

builders_parsing_test = unittest.make(_builders_parsing_impl)

# (That `--builder` reaches the ImageBuild action is checked with a real
# `--define builders=` by .ci/e2e_checks.py: a transition cannot set --define.)
