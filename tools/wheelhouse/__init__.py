"""wheelhouse: collect the wheels of the *-wheel images of one arch into a pip index.

Sources are the registry (``--from-registry``) or the images Bazel built into
the staging registry, found through their descriptors (``--from-staging``,
``--descriptor``). Images are identified by their descriptor or labels and
their tags parsed back by tagconf; a wheelhouse never mixes archs or ROCm
versions. The output is the wheels plus a PEP 503 simple
index for ``pip install --index-url file://OUT/simple``.
"""
