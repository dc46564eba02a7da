"""What every benchmark shares: `--quick` and a results file written as it measures.

    from bench import results
    results.add_arguments(parser)          # --quick, --results-dir
    out = results.Results("heavy", args)   # prints where it writes, to stderr
    out.record("child", rep=1, ours_s=3.2) # one JSON line, flushed at once

Each `record` appends one line ({"step": ..., "elapsed_s": ..., **values}) to
``<results dir>/<bench>-<UTC time>.jsonl`` (default dir
~/.cache/rocm-pytorch-images/bench, or $ROCM_PYTORCH_BENCH_RESULTS), so a run
that stops keeps every step it measured. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

DEFAULT_DIR = Path.home() / ".cache/rocm-pytorch-images/bench"
DIR_ENV = "ROCM_PYTORCH_BENCH_RESULTS"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny sizes, one repetition: checks the benchmark runs end to end (CI)",
    )
    parser.add_argument(
        "--results-dir",
        type=Path,
        help=f"where the JSON-lines results go (default ${DIR_ENV} or {DEFAULT_DIR})",
    )


class Results:
    """One run's JSON-lines results file, appended to as each step is measured."""

    def __init__(self, bench: str, args: argparse.Namespace) -> None:
        directory = args.results_dir or Path(os.environ.get(DIR_ENV) or DEFAULT_DIR)
        directory.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        self.path = directory / f"{bench}-{stamp}{'-quick' if args.quick else ''}.jsonl"
        self.start = time.monotonic()
        print(f"{bench}: results in {self.path}", file=sys.stderr, flush=True)
        self.record("start", argv=sys.argv[1:], quick=args.quick)

    def record(self, step: str, **values: object) -> None:
        line = {"step": step, "elapsed_s": round(time.monotonic() - self.start, 3), **values}
        with self.path.open("a") as f:
            f.write(json.dumps(line, default=str) + "\n")

    def summary(self, line: str) -> None:
        """The run's summary line: recorded, then printed as stdout's last line."""
        self.record("summary", line=line)
        print(line, flush=True)
