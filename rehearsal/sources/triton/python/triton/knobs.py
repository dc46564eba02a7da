"""Triton's knobs (the stand-in's few): where the cache lives and how C is built."""

import os


class build:
    # a callable (name, src, srcdir, library_dirs, include_dirs, libraries) -> .so path,
    # used instead of the C compiler when set
    impl = None


class cache:
    @staticmethod
    def home_dir() -> str:
        return os.environ.get("TRITON_HOME") or os.path.expanduser("~")

    @staticmethod
    def dir() -> str:
        return os.environ.get("TRITON_CACHE_DIR", "").strip() or os.path.join(
            cache.home_dir(), ".triton", "cache"
        )
