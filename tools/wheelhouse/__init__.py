"""wheelhouse: collect the wheels of the *-wheel images of one arch into a pip index.

Sources are the registry (``--from-registry``) or the OCI layouts Bazel built
(``--from-layouts``, ``--layout``). Images are identified by their build
metadata or labels and their tags parsed back by tagconf; a wheelhouse never
mixes archs or ROCm versions. The output is the wheels plus a PEP 503 simple
index for ``pip install --index-url file://OUT/simple``.
"""
