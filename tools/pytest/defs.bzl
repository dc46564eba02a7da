"""pytest_test: run pytest files as one Bazel py_test."""

load("@pypi//:requirements.bzl", "requirement")
load("@rules_python//python:defs.bzl", "py_test")

_MAIN = Label("//tools/pytest:pytest_main.py")

# pytest_main reads its switch with tools/envvars.py.
_ENVVARS = Label("//tools:envvars_lib")

def _envvars_unless_in(deps):
    return [] if [d for d in deps if native.package_relative_label(d) == _ENVVARS] else [_ENVVARS]

def pytest_test(name, srcs, deps = [], data = [], args = [], env = {}, tags = [], engine = False, **kwargs):
    """A py_test that runs pytest over `srcs` and writes JUnit XML for Bazel.

    Args:
      name: test target name.
      srcs: the `test_*.py` files to collect (helpers may be listed too).
      deps: py_library dependencies; pytest itself is added.
      data: runtime files the tests read (use their runfiles paths).
      args: extra pytest arguments.
      env: environment of the test.
      tags: tags of the test.
      engine: the tests use a Docker engine: pytest_main puts tools.engine's
        environment into os.environ first ($DOCKER_HOST, the host's engine,
        else the private one, started when none answers), and the test is
        tagged `local`.
      **kwargs: passed to py_test (size, tags, env, timeout, ...).
    """
    if engine:
        deps = deps + [Label("//tools/engine:engine_lib")]
        env = dict(env, ROCM_PYTORCH_TEST_ENGINE = "1")
        tags = tags + ([] if "local" in tags else ["local"])
    py_test(
        name = name,
        srcs = srcs + [_MAIN],
        main = _MAIN,
        deps = deps + [requirement("pytest")] + _envvars_unless_in(deps),
        data = data,
        env = env,
        tags = tags,
        args = args + ["$(rootpath %s)" % s for s in srcs if s.rpartition("/")[2].startswith("test_")],
        **kwargs
    )
