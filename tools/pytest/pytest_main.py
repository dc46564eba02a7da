"""Entry point of every pytest_test: pytest with Bazel's test conventions.

Writes JUnit XML to $XML_OUTPUT_FILE (so per-case results show up in
bazel-testlogs and in .ci/run's summary), keeps pytest's cache out of the
read-only runfiles, and turns "no tests collected" into a failure. With
$ROCM_PYTORCH_TEST_ENGINE on (a switch, tools/envvars.py: a value that is
none stops the test in one line), it first puts tools.engine's environment
into os.environ.
"""

import os
import sys

import pytest

from tools import envvars

ENGINE_ENV = "ROCM_PYTORCH_TEST_ENGINE"  # pytest_test(engine = True) sets it to 1


def main() -> int:
    try:
        use_engine = envvars.switch(ENGINE_ENV, False)
    except envvars.SettingError as e:
        print(f"pytest_main: error: {e}", file=sys.stderr)
        return 2
    if use_engine:
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
