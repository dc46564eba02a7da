"""The rehearsal: the real recipes of docker/ on a stand-in upstream made of Debian's ROCm.

standin.py (configuration, lock, mmdebstrap command), lock.py (`bazel run
//images/rehearsal:lock`), upstream.py (the UpstreamBuild action), layout.py
(AMD's layout, an mmdebstrap hook). docs/rehearsal.md.
"""
