"""BuildKit's `--output` of an image build, in each mode.

Standard library only: the benches run under the host's python3 and build
with the same output (bench/heavy.py, bench/rehearsal.py).
"""

from __future__ import annotations

# BuildKit's output of every image build: pushed to staging, not kept in the engine's
# image store. The reproducible mode (`--reproducible`, which --config=release sets)
# also rewrites every layer's timestamps to $SOURCE_DATE_EPOCH, so a clean rebuild
# gives the same digest; that costs a rewrite of each new layer (about 27 s per GB)
# and a child then pulls its rewritten parent back from staging, since the rewritten blob is
# not the snapshot BuildKit holds. The plain mode keeps BuildKit's own layers.
# SOURCE_DATE_EPOCH=0 is set in both (the config's and history's dates).
OUTPUT = "type=image,push=true,store=false,oci-mediatypes=true"
REPRODUCIBLE = ",rewrite-timestamp=true"


def output(reproducible: bool) -> str:
    """BuildKit's `--output` of a build in this mode, without the image name."""
    return OUTPUT + (REPRODUCIBLE if reproducible else "")


def staging_output(image_ref: str, reproducible: bool) -> str:
    """The `--output` of an image build: pushed to staging as ``image_ref``, not kept in
    the engine's image store; with ``reproducible``, timestamps rewritten to
    $SOURCE_DATE_EPOCH."""
    kind, _, rest = output(reproducible).partition(",")
    return f"{kind},name={image_ref},{rest}"
