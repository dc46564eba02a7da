"""The Starlark registry grammar (images/private/defines.bzl) against the shared table."""

load("@bazel_skylib//lib:unittest.bzl", "asserts", "unittest")

# buildifier: disable=bzl-visibility
load("//images/private:defines.bzl", "registry_error")
load(":registry_strings.bzl", "REGISTRY_STRINGS")

def _registry_strings_impl(ctx):
    env = unittest.begin(ctx)
    for value, need_namespace, taken in REGISTRY_STRINGS:
        error = registry_error("registry", value, need_namespace)
        asserts.equals(env, taken, error == None, "%r: %s" % (value, error or "taken"))
    return unittest.end(env)

registry_strings_test = unittest.make(_registry_strings_impl)
