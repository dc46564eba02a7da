"""Backends are found by entry point, as Triton finds them."""

from importlib.metadata import entry_points

backends = {ep.name: ep for ep in entry_points(group="triton.backends")}
