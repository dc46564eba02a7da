"""Checks of the files of built images: ELF dependencies and GPU targets (elf.py, stdlib only)."""
