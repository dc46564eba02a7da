# Replaced in the wheel by the build (setup.py): the source tree's own values.
__version__ = "0.0.0+unbuilt"
hip = None
cuda = None
git_version = "rehearsal"
