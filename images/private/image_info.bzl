"""ImageInfo: what an image target hands to its children and to push rules."""

def _image_info_init(*, layout, metadata, spec, target, arch, repository, parents = []):
    if type(target) != "string" or not target:
        fail("ImageInfo.target: want a catalogue target name, got: %r" % (target,))
    if arch != None and type(arch) != "string":
        fail("ImageInfo.arch: want a string or None, got: %r" % (arch,))
    if type(repository) != "string" or not repository:
        fail("ImageInfo.repository: want a repository name, got: %r" % (repository,))
    if not layout.is_directory:
        fail("ImageInfo.layout: want a tree artifact (OCI layout directory), got: %s" % layout)
    if type(parents) != "list":
        fail("ImageInfo.parents: want a list of ImageInfo, got: %r" % (parents,))
    return {
        "arch": arch,
        "parents": parents,
        "layout": layout,
        "metadata": metadata,
        "repository": repository,
        "spec": spec,
        "target": target,
    }

ImageInfo, _new_image_info = provider(
    doc = "One built image of the family: an OCI layout plus its spec and digest.",
    fields = {
        "arch": "str or None: the GPU architecture; None for arch-free targets.",
        "layout": "File (tree artifact): the OCI image layout directory.",
        "metadata": "File: JSON written by the build (digest, tags, refs, parents' digests).",
        "parents": "list[ImageInfo]: the catalogue parents this image was built from.",
        "repository": "str: the registry repository, e.g. 'base' for pytorch-base.",
        "spec": "File: JSON from `tagconf spec` (tags, refs, build args, labels); needs no build.",
        "target": "str: the catalogue target name, e.g. 'pytorch-wheel'.",
    },
    init = _image_info_init,
)

ImageSetInfo = provider(
    doc = "The images one `--define arch=...` selection picked from a target's arch variants.",
    fields = {
        "images": "list[ImageInfo]: the requested arch variants, in the requested order.",
    },
)
