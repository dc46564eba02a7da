"""Image references and how the grammar reads them: one table for both of its copies.

tools/oci/reference.py (`Reference.parse`, what the tools read) and
images/private/reference.bzl (`parse_reference`, what analysis reads, e.g.
`--define UPSTREAM_IMAGE=`) must give the same answer for every row:
tests/oci/test_references.py runs the Python one, tests/oci/registry_strings_test.bzl
the Starlark one. Data only, read by both (Python reads it with ast.literal_eval).
"""

# (text, default registry or None, (registry, repository, tag, digest) or None if
# refused, how the reference is written back when it is not `text` itself, else None)
REFERENCES = [
    # hosts, ports, schemes
    ("127.0.0.1:5003/rocm-pytorch/pytorch:4.5.6-9.8.7-full-gfx950", None, ("127.0.0.1:5003", "rocm-pytorch/pytorch", "4.5.6-9.8.7-full-gfx950", None), None),
    ("registry.example.com/a/b-c__d.e:latest", None, ("registry.example.com", "a/b-c__d.e", "latest", None), None),
    ("reg.io/ns/repo:1.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", None, ("reg.io", "ns/repo", "1.0", "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"), None),
    ("reg.io/ns/repo@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", None, ("reg.io", "ns/repo", None, "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"), None),
    ("reg.io/ns/repo", None, ("reg.io", "ns/repo", None, None), None),
    ("localhost/x:t", None, ("localhost", "x", "t", None), None),
    ("localhost:5000/a/b/c:t", None, ("localhost:5000", "a/b/c", "t", None), None),
    ("h/n/x", None, ("h", "n/x", None, None), None),
    ("Registry.Example.com/x:T_1", None, ("Registry.Example.com", "x", "T_1", None), None),
    ("[::1]:5000/staging/x:c-00", None, ("[::1]:5000", "staging/x", "c-00", None), None),
    ("[::1]/x", None, ("[::1]", "x", None, None), None),
    ("https://127.0.0.1:5000/ns/x:t", None, ("https://127.0.0.1:5000", "ns/x", "t", None), None),
    ("http://h/x", None, ("http://h", "x", None, None), None),
    ("HTTPS://h/x:t", None, ("https://h", "x", "t", None), "https://h/x:t"),
    ("h:65535/x", None, ("h:65535", "x", None, None), None),
    ("h:0/x", None, None, None),
    ("h:65536/x", None, None, None),
    ("h:/x", None, None, None),
    ("h:5000:1/x", None, None, None),
    ("bad_host.example.com/x", None, None, None),
    ("-bad/x", None, None, None),
    ("[]:5000/x", None, None, None),
    ("ftp://h/x", None, None, None),
    ("https:///x", None, None, None),
    ("https://h", None, None, None),
    ("alice:pw@h/x:t", None, None, None),
    # no registry: refused unless the caller names a default (Docker Hub's short names)
    ("ubuntu:24.04", None, None, None),
    ("x", None, None, None),
    ("/x", None, None, None),
    ("ubuntu:24.04", "docker.io", ("docker.io", "library/ubuntu", "24.04", None), "docker.io/library/ubuntu:24.04"),
    ("rocm/dev-ubuntu-26.04", "docker.io", ("docker.io", "rocm/dev-ubuntu-26.04", None, None), "docker.io/rocm/dev-ubuntu-26.04"),
    ("rocm/dev-ubuntu-26.04:9.8.7-full", "docker.io", ("docker.io", "rocm/dev-ubuntu-26.04", "9.8.7-full", None), "docker.io/rocm/dev-ubuntu-26.04:9.8.7-full"),
    ("mirror.example.internal/rocm/dev-ubuntu-26.04", "docker.io", ("mirror.example.internal", "rocm/dev-ubuntu-26.04", None, None), None),
    ("127.0.0.1:5000/rocm/dev-ubuntu-26.04", "docker.io", ("127.0.0.1:5000", "rocm/dev-ubuntu-26.04", None, None), None),
    ("localhost/rocm/dev", "docker.io", ("localhost", "rocm/dev", None, None), None),
    ("Rocm/dev", "docker.io", None, None),
    # repository components: [a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*
    ("h/a.b_c__d--e/0", None, ("h", "a.b_c__d--e/0", None, None), None),
    ("h/", None, None, None),
    ("h//x", None, None, None),
    ("h/x/", None, None, None),
    ("h/UP", None, None, None),
    ("h/a___b", None, None, None),
    ("h/a..b", None, None, None),
    ("h/a._b", None, None, None),
    ("h/-a", None, None, None),
    ("h/a-", None, None, None),
    ("h/a b", None, None, None),
    (" h/x", None, None, None),
    ("h/x ", None, None, None),
    ("h/x:t\n", None, None, None),
    # tags: [\w][\w.-]{0,127}
    ("h/x:_t", None, ("h", "x", "_t", None), None),
    ("h/x:tttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttt", None, ("h", "x", "tttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttt", None), None),
    ("h/x:ttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttt", None, None, None),
    ("h/x:", None, None, None),
    ("h/x:-t", None, None, None),
    ("h/x:.t", None, None, None),
    ("h/x:t+1", None, None, None),
    ("h/x:t:u", None, None, None),
    ("h:5000/x:t/u", None, None, None),
    # digests: ALGORITHM:ENCODED; sha256 and sha512 lower-case hex of their length
    ("h/x@sha512:abababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababab", None, ("h", "x", None, "sha512:abababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababab"), None),
    ("h/x@multihash+base58:QmRZxt2b1FVZPNqd8hsiykDL3TdBDeTSPX9Kv46HmX4Gx8", None, ("h", "x", None, "multihash+base58:QmRZxt2b1FVZPNqd8hsiykDL3TdBDeTSPX9Kv46HmX4Gx8"), None),
    ("h/x@sha256:00", None, None, None),
    ("h/x@sha256:0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF", None, None, None),
    ("h/x@sha256", None, None, None),
    ("h/x@", None, None, None),
    ("h/x@:00", None, None, None),
    ("h/x@Sha256:0000000000000000000000000000000000000000000000000000000000000000", None, None, None),
    ("h/x@sha256:0000000000000000000000000000000000000000000000000000000000000000@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", None, None, None),
    # names: REGISTRY/REPOSITORY at most 255 characters
    ("h/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", None, ("h", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", None, None), None),
    ("h/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", None, None, None),
]
