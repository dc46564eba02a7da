"""Print the CI summary line from the JUnit XML of the test targets given.

Usage: python3 .ci/summary.py TESTLOGS_DIR LABEL...

pytest_test targets write one <testcase> per pytest case; other tests (diff
tests, analysis tests) get Bazel's one-case XML. A target without XML (it
failed to build, or never ran) counts as one failure. The last line is
`N passed, N failed`.
"""

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def counts(xml: Path) -> tuple[int, int]:
    root = ET.parse(xml).getroot()
    passed = failed = 0
    for case in root.iter("testcase"):
        bad = case.find("failure") is not None or case.find("error") is not None
        skipped = case.find("skipped") is not None
        if bad or skipped:  # a skipped case is not a pass: CI skips nothing
            failed += 1
        else:
            passed += 1
    if passed == failed == 0:  # Bazel's XML for a crashed test can be empty
        failed = 1
    return passed, failed


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.split("\n\n")[0] + "\n\n" + __doc__.split("\n\n")[1])
        return 0 if argv else 2
    testlogs, labels = Path(argv[0]), argv[1:]
    passed = failed = 0
    for label in labels:
        package, _, name = label.lstrip("/").partition(":")
        xml = testlogs / package / name / "test.xml"
        if not xml.exists():
            print(f"FAIL: {label}: no test result (it did not build, or never ran)")
            failed += 1
            continue
        p, f = counts(xml)
        if f:
            print(f"FAIL: {label}: {f} failed")
        passed += p
        failed += f
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
