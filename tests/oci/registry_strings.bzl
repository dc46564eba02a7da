"""Registry strings and whether the grammar takes them: one table for both of its copies.

tools/oci/reference.py (`registry_string`, what the tools check) and
images/private/reference.bzl (`registry_error`, what analysis checks) must give
the same answer for every row: tests/oci/test_registry_strings.py runs the
Python one, tests/oci/registry_strings_test.bzl the Starlark one. Data only,
read by both (Python reads it with ast.literal_eval).
"""

# (value, a namespace is required, taken)
REGISTRY_STRINGS = [
    # hosts, ports, schemes
    ("127.0.0.1:5003/rocm-pytorch", False, True),
    ("registry.example.com/a/b-c__d.e", False, True),
    ("https://127.0.0.1:5000/ns", False, True),
    ("http://localhost:5000", False, True),
    ("localhost", False, True),
    ("h/n", False, True),
    ("Registry.Example.com/x", False, True),
    # a trailing `/` is refused, not dropped: the value is not what was meant
    ("registry.example.com:5000/team/staging/", False, False),
    ("127.0.0.1:5000/team/", False, False),
    ("h:5000/", False, False),
    ("https://h/ns/", False, False),
    # blanks around a value are refused (quoting gone wrong), not dropped
    ("  registry.example.com/ns  ", False, False),
    (" h/ns", False, False),
    ("h/ns ", False, False),
    ("h/ns\n", False, False),
    # a scheme is case-insensitive (RFC 3986 3.1)
    ("HTTP://localhost:5000/ns", False, True),
    ("HTTPS://h/ns", False, True),
    ("Https://h/ns", False, True),
    ("FTP://h/ns", False, False),
    ("[::1]:5000/staging", False, True),
    ("[::1]/staging", False, True),
    ("[fe80::1%25eth0]:5000/ns", False, False),
    ("[]:5000/ns", False, False),
    ("[::1]x/ns", False, False),
    ("[::1]:/ns", False, False),
    ("h:1/ns", False, True),
    ("h:65535/ns", False, True),
    ("h:0/ns", False, False),
    ("h:65536/ns", False, False),
    ("h:99999/ns", False, False),
    ("h:123456/ns", False, False),
    ("h:/ns", False, False),
    ("h:50x0/ns", False, False),
    ("h:5000:1/ns", False, False),
    ("ftp://h/ns", False, False),
    ("http://https://h/ns", False, False),
    ("", False, False),
    ("/", False, False),
    ("//ns", False, False),
    ("re l", False, False),
    ("-bad", False, False),
    ("bad-.example.com", False, False),
    ("bad..example.com", False, False),
    ("bad_host.example.com/ns", False, False),
    ("alice:pw@h/x", False, False),
    ("h/x@sha256:00", False, False),
    # namespace components: [a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*
    ("h/a.b_c__d--e", False, True),
    ("h/a---b", False, True),
    ("h/0", False, True),
    ("127.0.0.1:5003/UP", False, False),
    ("h/a___b", False, False),
    ("h/a..b", False, False),
    ("h/a._b", False, False),
    ("h/a_.b", False, False),
    ("h/a-_b", False, False),
    ("h/a_-b", False, False),
    ("h/a.-b", False, False),
    ("h/a-.b", False, False),
    ("h/-a", False, False),
    ("h/a-", False, False),
    ("h/_a", False, False),
    ("h/a.", False, False),
    ("h/a//b", False, False),
    ("h/a:latest", False, False),
    ("h/a b", False, False),
    # a namespace required (staging prefixes)
    ("h:5000", True, False),
    ("h:5000/", True, False),
    ("h:5000/s", True, True),
]
