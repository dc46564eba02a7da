"""Calls over items on a few threads, as the push and the layout copy blobs."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def parallel(jobs: int, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``fn`` over ``items`` on up to ``jobs`` threads; the first error stops the rest.

    An error waits for the calls in flight; an interrupt (KeyboardInterrupt, a
    push's Interrupted) abandons them.
    """
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    futures = [pool.submit(fn, item) for item in items]
    try:
        results = [f.result() for f in futures]
    except Exception:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return results
