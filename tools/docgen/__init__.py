"""Markdown API docs from Bazel's `starlark_doc_extract` output (docs/rules.md)."""
