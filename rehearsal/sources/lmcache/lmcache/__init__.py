"""LMCache (rehearsal stand-in): the KV-cache layer for vLLM, in small."""

try:
    from lmcache._version import __version__
except ImportError:  # built without setuptools-scm's version file
    __version__ = "0.0.0"

__all__ = ["__version__"]
