"""What builds read from staging: staging hits, an image read back whole.

Image builds (tools/imagebuild) and the rehearsal's stand-in upstream
(tools/rehearsal) both push into staging under ``c-<content key>`` and read
the result back; both reuse an image staging already holds under that tag.
"""

from __future__ import annotations

import json

from tools.oci.digest import digest_of
from tools.oci.errors import RegistryError
from tools.oci.reference import Reference
from tools.staging import Staging


def hit(staging: Staging, name: str, tag: str) -> tuple[str | None, str]:
    """(digest, why) of an image staging already holds under a content key's ``tag``,
    whole (its manifest and every blob it names); (None, why not) otherwise.

    The key holds everything that shapes the image, so this is Bazel's own
    cache one level down: what a clean output base, a new runner or another
    checkout on the same staging would otherwise build again.
    """
    c = staging.client()
    try:
        digest = c.manifest_digest(name, tag)
        if digest is None:
            return None, "not staged"
        manifest = json.loads(c.get_manifest(name, digest)[0])
        blobs = [manifest["config"], *manifest.get("layers", [])]
        missing = [b["digest"] for b in blobs if not c.blob_exists(name, b["digest"])]
        if missing:
            return None, f"staged, but staging lost blob {missing[0]}"
        return digest, "staged"
    except (RegistryError, ValueError, KeyError, TypeError) as e:
        return None, f"cannot be read back ({e})"
    finally:
        c.close()


def hit_note(staging: Staging, name: str, tag: str, digest: str, skipped: str) -> str:
    """What a build that reused staging's image says (stderr, its log)."""
    return (
        f"staging hit: {Reference(staging.host, name, tag)} is {digest}, whole; {skipped} not run"
    )


def fetch(staging: Staging, name: str, digest: str) -> tuple[bytes, str, dict]:
    """The manifest (exact bytes), its media type and the config, from staging.

    Raises RegistryError naming the host."""
    host = staging.host
    c = staging.client()
    try:
        manifest, content_type, _ = c.get_manifest(name, digest)
        if digest_of(manifest) != digest:
            raise RegistryError(f"staging {host}: {name}@{digest}: manifest does not match")
        data = json.loads(manifest)
        config = c.get_blob(name, data["config"]["digest"])
    except RegistryError as e:
        raise RegistryError(f"staging {host}: {e}") from None
    finally:
        c.close()
    return manifest, data.get("mediaType") or content_type, json.loads(config)
