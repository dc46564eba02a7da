"""The local publish history: one JSON line per image a push published.

`registry push` appends, for every image of the plan whose tags all landed
(pushed, or up to date), what it published: when, where, the tags, the digest,
the size (compressed layers plus config) and whether it was attested and
signed. `bazel run //images:report` reads it for the size plots ("the last
publishes") and for "what changed" when the registry cannot be asked.

It is this user's and this machine's record of its own pushes, not the
registry's: a push from another host is not in it (the report compares with
the registry's current manifest of each tag for that). The file is
`$ROCM_PYTORCH_HISTORY_DIR/publish.jsonl`, by default under the user's cache
dir (`~/.cache/rocm-pytorch-images/history/publish.jsonl`); each line is
written whole with one append, so concurrent pushes never interleave within
a line.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path

from tools import places

ENV = "ROCM_PYTORCH_HISTORY_DIR"
SCHEMA = 1


def path() -> Path:
    """Where the history is ($ROCM_PYTORCH_HISTORY_DIR, else the cache dir's `history/`)."""
    return places.state_dir(ENV, "history") / "publish.jsonl"


def record(
    *,
    push_id: str,
    registry: str,
    repository: str,
    target: str,
    arch: str | None,
    tags: Iterable[str],
    digest: str,
    size: int,
    layers: int,
    action: str,
    attested: bool,
    signed: bool,
) -> dict:
    return {
        "schema": SCHEMA,
        "time": push_id,
        "registry": registry,
        "repository": repository,
        "target": target,
        "arch": arch,
        "tags": list(tags),
        "digest": digest,
        "size": size,
        "layers": layers,
        "action": action,
        "attested": attested,
        "signed": signed,
    }


def now_id() -> str:
    """A push's id: its UTC time to the microsecond (one push, one id; sorts by time)."""
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}Z"


def append(records: list[dict], where: Path | None = None) -> Path:
    """Append ``records``, one line each, in one write per line."""
    where = where or path()
    where.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for r in records:
            os.write(fd, (json.dumps(r, sort_keys=True) + "\n").encode())
    finally:
        os.close(fd)
    return where


def read(where: Path | None = None) -> list[dict]:
    """Every record, oldest first; a line that is not a record (a torn write) is skipped."""
    where = where or path()
    try:
        text = where.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    out = []
    for line in text.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict) and r.get("schema") == SCHEMA:
            out.append(r)
    return out
