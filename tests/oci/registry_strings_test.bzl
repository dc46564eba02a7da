"""The Starlark registry and reference grammars (images/private/reference.bzl) against the shared tables."""

load("@bazel_skylib//lib:unittest.bzl", "asserts", "unittest")

# buildifier: disable=bzl-visibility
load("//images/private:reference.bzl", "parse_reference", "registry_error")
load(":references.bzl", "REFERENCES")
load(":registry_strings.bzl", "REGISTRY_STRINGS")

def _registry_strings_impl(ctx):
    env = unittest.begin(ctx)
    for value, need_namespace, taken in REGISTRY_STRINGS:
        error = registry_error("registry", value, need_namespace)
        asserts.equals(env, taken, error == None, "%r: %s" % (value, error or "taken"))
    return unittest.end(env)

registry_strings_test = unittest.make(_registry_strings_impl)

def _references_impl(ctx):
    env = unittest.begin(ctx)
    for text, default_registry, want, _written in REFERENCES:
        parsed = parse_reference(text, default_registry)
        got = None if parsed.error else (parsed.registry, parsed.repository, parsed.tag, parsed.digest)
        asserts.equals(env, want, got, "%r: %s" % (text, parsed.error or "taken"))
    return unittest.end(env)

references_test = unittest.make(_references_impl)
