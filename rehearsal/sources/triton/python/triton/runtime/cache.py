"""The file cache of Triton's compiled artefacts: ``<cache dir>/<key>/<file>``.

The cache dir is TRITON_CACHE_DIR, else ``$TRITON_HOME/.triton/cache`` (TRITON_HOME
defaults to the home directory), as Triton's FileCacheManager has it; a file is
written to a temporary name and renamed into place, so concurrent processes
never see half a file.
"""

import os
import uuid

from triton import knobs


class FileCacheManager:
    def __init__(self, key: str):
        self.key = key
        self.cache_dir = os.path.join(knobs.cache.dir(), key)

    def get_file(self, filename: str) -> str | None:
        path = os.path.join(self.cache_dir, filename)
        return path if os.path.exists(path) else None

    def put(self, data: bytes, filename: str) -> str:
        os.makedirs(self.cache_dir, exist_ok=True)
        path = os.path.join(self.cache_dir, filename)
        temp = os.path.join(self.cache_dir, f"tmp.pid_{os.getpid()}_{uuid.uuid4()}")
        with open(temp, "wb") as f:
            f.write(data)
        os.replace(temp, path)
        return path


def get_cache_manager(key: str) -> FileCacheManager:
    return FileCacheManager(key)
