"""Processes the tools run: daemons and their lifecycle (daemon.py), docker-registry
processes (registryd.py), Bazel's persistent workers (worker.py), a scratch Bazel for
the CI checks (scratch_bazel.py). Below engine/ and staging/, which use them."""
