"""Registry strings: `HOST[:PORT]/NAMESPACE`, checked against the OCI reference grammar.

Every push, plan and cache ref is `<registry>/<repository>:<tag>`, so a
registry string that no client can pull from is refused before anything is
built or pushed. The grammar is tools/oci/reference.py's, which
images/private/reference.bzl applies at Bazel analysis time too.
"""

from __future__ import annotations

from tools.oci.reference import BadRegistry, registry_string
from tools.tagconf.errors import UsageError


def check_registry(value: str, where: str = "--registry", *, namespace: bool = False) -> str:
    """Return ``value`` if it is `HOST[:PORT][/NAMESPACE]` (no trailing `/`), else raise.

    ``namespace``: a namespace is required (staging prefixes).
    An `http://` or `https://` prefix forces the scheme and is kept.
    """
    try:
        return registry_string(value, namespace=namespace)
    except BadRegistry as e:
        raise UsageError(where, e.problem, e.fix) from None
