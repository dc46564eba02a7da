"""How Triton builds the C it writes at run time (the launchers, the driver's utils).

As python/triton/runtime/build.py does: the compiler is CC, else gcc, else clang
on PATH (none: RuntimeError); the source is compiled into a shared object with
``-O3 -shared -fPIC`` against the running interpreter's Python.h (sysconfig's
include, Debian's posix_local scheme read as posix_prefix), the caller's include
and library directories; the object is kept in Triton's cache under a hash of the
source and the platform, and imported from there. A failing compiler raises
CalledProcessError after printing its own error (e.g. no Python.h).
"""

import hashlib
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from triton import knobs
from triton.runtime.cache import get_cache_manager


def get_cc() -> str:
    cc = os.environ.get("CC")
    if cc is None:
        gcc = shutil.which("gcc")
        cc = gcc if gcc is not None else shutil.which("clang")
        if cc is None:
            raise RuntimeError(
                "Failed to find C compiler. Please specify via CC environment variable or set"
                " triton.knobs.build.impl."
            )
    return cc


def python_include() -> str:
    scheme = sysconfig.get_default_scheme()
    if scheme == "posix_local":  # Debian's; its headers are posix_prefix's
        scheme = "posix_prefix"
    return sysconfig.get_paths(scheme=scheme)["include"]


def _build(name, src, srcdir, library_dirs, include_dirs, libraries) -> str:
    if knobs.build.impl is not None:
        return knobs.build.impl(name, src, srcdir, library_dirs, include_dirs, libraries)
    so = os.path.join(srcdir, name + sysconfig.get_config_var("EXT_SUFFIX"))
    cc = get_cc()
    include_dirs = [*include_dirs, srcdir, python_include()]
    cmd = [cc, src, "-O3", "-shared", "-fPIC", "-o", so]
    cmd += [f"-l{lib}" for lib in libraries]
    cmd += [f"-L{d}" for d in library_dirs]
    cmd += [f"-I{d}" for d in include_dirs]
    subprocess.check_call(cmd)
    return so


def platform_key() -> str:
    return ",".join((platform.machine(), platform.system(), sys.version))


def _load_module_from_path(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compile_module_from_src(src, name, library_dirs=None, include_dirs=None, libraries=None):
    """The module ``name`` built from the C source ``src``: from the cache, else compiled
    into it."""
    key = hashlib.sha256((src + platform_key()).encode()).hexdigest()
    cache = get_cache_manager(key)
    filename = name + sysconfig.get_config_var("EXT_SUFFIX")
    path = cache.get_file(filename)
    if path is None:
        with tempfile.TemporaryDirectory() as tmp:
            src_path = os.path.join(tmp, "main.c")
            with open(src_path, "w") as f:
                f.write(src)
            so = _build(
                name, src_path, tmp, library_dirs or [], include_dirs or [], libraries or []
            )
            with open(so, "rb") as f:
                path = cache.put(f.read(), filename)
    return _load_module_from_path(name, path)
