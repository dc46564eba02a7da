"""NIXL (rehearsal stand-in): one logger configuration for the package.

    from .logging import get_logger
    logger = get_logger(__name__)

The level comes from NIXL_LOG_LEVEL (default WARNING).
"""

import logging
import os

_configured = False


def _configure() -> None:
    global _configured
    if _configured:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(
        logging.Formatter("%(asctime)s NIXL %(levelname)-7s %(filename)s:%(lineno)d %(message)s")
    )
    root = logging.getLogger("nixl")
    root.addHandler(handler)
    root.setLevel(os.environ.get("NIXL_LOG_LEVEL", "WARNING").upper())
    root.propagate = False
    _configured = True


def get_logger(name: str) -> logging.Logger:
    """A logger under the package's ``nixl`` logger, whatever the import name."""
    _configure()
    return logging.getLogger("nixl." + name.split(".", 1)[-1])
