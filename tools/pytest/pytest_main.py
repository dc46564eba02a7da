"""Entry point of every pytest_test: pytest with Bazel's test conventions.

Writes JUnit XML to $XML_OUTPUT_FILE (so per-case results show up in
bazel-testlogs and in .ci/run's summary), keeps pytest's cache out of the
read-only runfiles, and turns "no tests collected" into a failure.
"""

import os
import sys

import pytest


def main() -> int:
    if os.environ.get("ROCM_PYTORCH_TEST_ENGINE"):  # pytest_test(engine = True)
        from tools import engine

        try:
            engine.apply()
        except engine.EngineError as e:
            print(f"pytest_main: no Docker engine for this test: {e}", file=sys.stderr)
            return 1
    args = ["-p", "no:cacheprovider", "-ra", *sys.argv[1:]]
    xml = os.environ.get("XML_OUTPUT_FILE")
    if xml:
        args.append(f"--junitxml={xml}")
    if os.environ.get("TESTBRIDGE_TEST_ONLY"):  # bazel test --test_filter=...
        args += ["-k", os.environ["TESTBRIDGE_TEST_ONLY"]]
    code = pytest.main(args)
    # Exit 5 = no tests collected: a test target that tests nothing is broken.
    return 1 if code == pytest.ExitCode.NO_TESTS_COLLECTED else int(code)


if __name__ == "__main__":
    sys.exit(main())
