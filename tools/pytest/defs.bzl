"""pytest_test: run pytest files as one Bazel py_test."""

load("@pypi//:requirements.bzl", "requirement")
load("@rules_python//python:defs.bzl", "py_test")

_MAIN = Label("//tools/pytest:pytest_main.py")

def pytest_test(name, srcs, deps = [], data = [], args = [], **kwargs):
    """A py_test that runs pytest over `srcs` and writes JUnit XML for Bazel.

    Args:
      name: test target name.
      srcs: the `test_*.py` files to collect (helpers may be listed too).
      deps: py_library dependencies; pytest itself is added.
      data: runtime files the tests read (use their runfiles paths).
      args: extra pytest arguments.
      **kwargs: passed to py_test (size, tags, env, timeout, ...).
    """
    py_test(
        name = name,
        srcs = srcs + [_MAIN],
        main = _MAIN,
        deps = deps + [requirement("pytest")],
        data = data,
        args = args + ["$(rootpath %s)" % s for s in srcs if s.rpartition("/")[2].startswith("test_")],
        **kwargs
    )
