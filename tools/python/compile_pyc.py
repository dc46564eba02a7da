"""Compile Python sources to bytecode at build time, for tools/python/bytecode.bzl.

    compile_pyc.py ARGS_FILE

ARGS_FILE has one `SOURCE<TAB>CACHE_DIR` line per source: SOURCE.py is
compiled to CACHE_DIR/SOURCE.<cache tag>.pyc, where the interpreter looks
for it (`__pycache__` next to the source in the runfiles tree). The pycs are
checked-hash ones: the interpreter compares them with the source's hash on
import and compiles the source itself when they differ, so a stale pyc is
never run. The cache tag is this interpreter's (cpython-314 here); another
interpreter ignores them. A source this interpreter cannot compile is left
to be compiled at import, as it would be without this step.
"""

from __future__ import annotations

import os
import py_compile
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    tag = sys.implementation.cache_tag
    lines = Path(argv[1]).read_text().splitlines()
    dirs = set()
    for line in lines:
        source, cache_dir = line.split("\t")
        dirs.add(cache_dir)
        stem = os.path.basename(source).rpartition(".")[0]
        try:
            py_compile.compile(
                source,
                cfile=os.path.join(cache_dir, f"{stem}.{tag}.pyc"),
                doraise=True,
                invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
            )
        except py_compile.PyCompileError:
            pass
    for d in dirs:  # every declared directory exists, even if nothing compiled
        os.makedirs(d, exist_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
