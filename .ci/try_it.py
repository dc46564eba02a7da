#!/usr/bin/env python3
"""Run the README's "Try it here" block as written and check what each command prints.

    python3 .ci/try_it.py [README]

The block is the ```sh fence between `<!-- try-it -->` and `<!-- /try-it -->`
in README (default: the README.md of the working directory). Its commands run
in order in one bash (an `eval` of one reaches the next), from the working
directory, each with its output kept. A comment line `#   TEXT` after a
command is what that command prints: each part of TEXT between `...` must
appear in its output, in that order. The first command that fails, or whose
output lacks what the README says, ends the run.

.ci/fresh_clone_check.sh runs it in its fresh clone after `bazel test`, so
the block a newcomer copies works on a fresh machine. Prints one line per
command, then `try it: N passed, N failed`.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

BLOCK = re.compile(r"<!-- try-it -->\s*```sh\n(.*?)```\s*<!-- /try-it -->", re.S)
EXPECT = "#   "


def steps(readme: str) -> list[tuple[str, list[str]]]:
    """(command, what it prints) in order, from the README's try-it block."""
    m = BLOCK.search(readme)
    if not m:
        raise SystemExit("try it: no <!-- try-it --> ```sh block in the README")
    out: list[tuple[str, list[str]]] = []
    for line in m.group(1).splitlines():
        if line.startswith(EXPECT) and out:
            out[-1][1].append(line[len(EXPECT) :].strip())
        elif line.strip() and not line.lstrip().startswith("#"):
            out.append((line, []))
    if not out:
        raise SystemExit("try it: the README's try-it block has no command")
    return out


def printed(text: str, expected: str) -> bool:
    """Each `...`-separated part of ``expected`` is in ``text``, in order."""
    at = 0
    for part in (p.strip() for p in expected.split("...")):
        if not part:
            continue
        found = text.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    return True


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    readme = Path(argv[0] if argv else "README.md")
    plan = steps(readme.read_text())
    with tempfile.TemporaryDirectory(prefix="try-it-") as tmp:
        script = ["set -uo pipefail"]
        for i, (command, _) in enumerate(plan):
            log = Path(tmp) / f"{i}.log"
            # braces, not a subshell: an eval reaches the commands after it
            script.append(f"{{ {command}\n}} >{log} 2>&1 || {{ echo $? >{log}.rc; exit 1; }}")
        proc = subprocess.run(["bash", "-c", "\n".join(script)], check=False)
        passed = failed = 0
        for i, (command, expected) in enumerate(plan):
            log = Path(tmp) / f"{i}.log"
            if not log.exists():
                print(f"NOT RUN: {command}")
                failed += 1
                continue
            text = log.read_text(errors="replace")
            rc = Path(f"{log}.rc")
            missing = [e for e in expected if not printed(text, e)]
            if rc.exists() or missing:
                why = f"exit {rc.read_text().strip()}" if rc.exists() else f"no {missing[0]!r}"
                print(f"FAIL: {command}: {why}; its output ends:\n{text[-1500:]}")
                failed += 1
            else:
                print(f"PASS: {command}")
                passed += 1
        if proc.returncode and not failed:
            failed += 1
    print(f"try it: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
