"""registry_tool_test: tests/registry's tests of the `registry` tool on synthetic images."""

load("@pypi//:requirements.bzl", "requirement")
load("//tools/pytest:defs.bzl", "pytest_test")

def registry_tool_test(name, srcs, size = "medium", deps = [], **kwargs):
    """A pytest_test that runs `//tools/registry` against docker-registry processes it starts.

    Every such test builds synthetic images (staging_images.py, with the
    repositories and tags of the tests' own catalogue, tests/fixtures/catalog.toml),
    finds the tool at $REGISTRY_BIN_TOOL and runs locally (registry processes on
    loopback ports).

    Args:
      name: the test's name.
      srcs: its test files and helpers besides staging_images.py.
      size: the Bazel test size.
      deps: more deps than the registry, staging and tagconf libraries and httpx.
      **kwargs: passed to pytest_test (e.g. engine = True).
    """
    pytest_test(
        name = name,
        size = size,
        srcs = srcs + ["staging_images.py"],
        data = [
            "//tests/fixtures:catalog.toml",
            "//tools/registry",
        ],
        env = {"REGISTRY_BIN_TOOL": "$(rootpath //tools/registry)"},
        tags = ["local"],
        deps = [
            ":fixtures",
            "//tools/oci:oci_lib",
            "//tools/registry:registry_lib",
            "//tools/staging:staging_lib",
            "//tools/tagconf:tagconf_lib",
            requirement("httpx"),
        ] + deps,
        **kwargs
    )
