"""ImageInfo: what an image target hands to its children and to push rules."""

def _image_info_init(*, descriptor, spec, target, arch, repository, parents = [], size = None, log = None):
    if type(target) != "string" or not target:
        fail("ImageInfo.target: want a catalogue target name, got: %r" % (target,))
    if arch != None and type(arch) != "string":
        fail("ImageInfo.arch: want a string or None, got: %r" % (arch,))
    if type(repository) != "string" or not repository:
        fail("ImageInfo.repository: want a repository name, got: %r" % (repository,))
    if descriptor.is_directory or not descriptor.basename.endswith(".json"):
        fail("ImageInfo.descriptor: want the image's descriptor JSON file, got: %s" % descriptor)
    if type(parents) != "list":
        fail("ImageInfo.parents: want a list of ImageInfo, got: %r" % (parents,))
    if size != None and not size.basename.endswith(".size.json"):
        fail("ImageInfo.size: want the image's size record (.size.json), got: %s" % size)
    return {
        "arch": arch,
        "log": log,
        "size": size,
        "parents": parents,
        "descriptor": descriptor,
        "repository": repository,
        "spec": spec,
        "target": target,
    }

ImageInfo, _new_image_info = provider(
    doc = "One built image of the family: its descriptor (the image itself is in staging) and spec.",
    fields = {
        "arch": "str or None: the GPU architecture; None for arch-free targets.",
        "descriptor": "File: JSON written by the build (digest, manifest, config, staging ref, parents' digests); tools/staging/descriptor.py reads it.",
        "parents": "list[ImageInfo]: the catalogue parents this image was built from.",
        "log": "str or None: where its ImageBuild writes BuildKit's log and the build record, under the execution root (`bazel-out/logs/...`); None for a stand-in.",
        "repository": "str: the registry repository, e.g. 'base' for pytorch-base.",
        "size": "File or None: its size record (`tagconf size`: bytes, layers, budget); None for a stand-in.",
        "spec": "File: JSON from `tagconf spec` (tags, refs, build args, labels); needs no build.",
        "target": "str: the catalogue target name, e.g. 'pytorch-wheel'.",
    },
    init = _image_info_init,
)

ImageSetInfo = provider(
    doc = "The images one `--define arch=...` selection picked from a target's arch variants.",
    fields = {
        "images": "list[ImageInfo]: the requested arch variants, in the requested order.",
        "left_out": "list[str]: why requested archs are missing (the target is not built for them); pushes print it.",
    },
)
