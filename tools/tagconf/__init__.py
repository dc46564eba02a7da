"""tagconf: the image catalogue's loader, validator and tag renderer.

It is the only code that knows the tag rules; the Starlark side and the push
tool consume what it emits.
"""
