"""probe: what an image's own loader and files give a GPU host, read inside the image.

Run by tools/imagecheck (check.py) in the image, as its user, with its
environment and its own Python (3.10+; stdlib only, with elf.py beside it):

    python probe.py SPEC.json

SPEC names the libraries to load, the packages to import and the kernel
locations to read (check.py writes it from needs.toml). The probe prints one
JSON object: what loaded and what did not (the loader's own message), each
package's shared objects with their DT_NEEDED and unresolved libraries, the
GPU targets of every fat binary, and the arch tokens of each kernel directory.
It judges nothing: check.py does.
"""

from __future__ import annotations

import ctypes
import fnmatch
import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import elf

TOKEN = re.compile(r"gfx[0-9a-z]+(?:-[0-9]+)?(?:-generic)?")
SHARED = re.compile(r"\.so(\.[0-9]+)*$")
ARCH_FILE = "/etc/rocm-pytorch/gpu-arch"


def ldconfig() -> dict[str, str]:
    """{file name: path} of what the loader's cache holds (ldconfig -p)."""
    found: dict[str, str] = {}
    for cmd in (["ldconfig", "-p"], ["/sbin/ldconfig", "-p"]):
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
        except OSError:
            continue
        for line in out.splitlines():
            name, arrow, path = line.strip().partition(" => ")
            if arrow:
                found.setdefault(name.split(" (", 1)[0], path.strip())
        break
    return found


RTLD_DI_LINKMAP = 2


def loaded_from(handle: ctypes.CDLL) -> str:
    """The file the loader mapped for ``handle`` (dlinfo's link map: its l_name)."""
    libc = ctypes.CDLL(None)
    link_map = ctypes.c_void_p()
    if libc.dlinfo(ctypes.c_void_p(handle._handle), RTLD_DI_LINKMAP, ctypes.byref(link_map)):
        return ""
    # struct link_map { ElfW(Addr) l_addr; char *l_name; ... }
    name = ctypes.cast(
        link_map.value + ctypes.sizeof(ctypes.c_void_p), ctypes.POINTER(ctypes.c_char_p)
    )
    return (name[0] or b"").decode(errors="replace")


def load(name: str) -> dict:
    """ctypes.CDLL ``name`` as the package would: the file it mapped, or the loader's error."""
    try:
        handle = ctypes.CDLL(name)
    except OSError as e:
        return {"name": name, "error": str(e)}
    return {"name": name, "path": loaded_from(handle) or name, "error": None}


def by_library(library: str, names) -> list[str]:
    """The names among ``names`` that are lib<library>.so[.N...]."""
    pattern = re.compile(rf"^lib{re.escape(library)}\.so(\.[0-9]+)*$")
    return sorted((n for n in names if pattern.match(n)), key=lambda n: (-n.count("."), n))


def package_files(name: str, also: list[str]) -> tuple[list[str], str | None]:
    """The shared objects of the distributions that install import ``name`` (and ``also``)."""
    dists = set()
    mapping = importlib.metadata.packages_distributions()
    for top in [name, *also]:
        dists.update(mapping.get(top, []))
    if not dists:
        return [], None
    files = []
    for dist in sorted(dists):
        for f in importlib.metadata.distribution(dist).files or []:
            if SHARED.search(f.name):
                files.append(str(f.locate()))
    return sorted(files), ",".join(sorted(dists))


def resolve(path: str) -> tuple[dict[str, str], list[str]]:
    """What ``ldd path`` finds ({soname: file}, through the object's own RUNPATH too) and
    the libraries it cannot find."""
    proc = subprocess.run(["ldd", path], capture_output=True, text=True, check=False)
    found, missing = {}, set()
    for line in proc.stdout.splitlines():
        name, arrow, rest = line.strip().partition(" => ")
        if not arrow:
            continue
        if rest.startswith("not found"):
            missing.add(name)
        else:
            found[name] = rest.rsplit(" (", 1)[0].strip()
    return found, sorted(missing)


def import_error(name: str) -> str | None:
    """None when ``import name`` works in a fresh interpreter, else its last line."""
    proc = subprocess.run(
        [sys.executable, "-c", f"import {name}"], capture_output=True, text=True, check=False
    )
    if proc.returncode == 0:
        return None
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    return lines[-1] if lines else f"exit {proc.returncode}"


def fatbins(files: list[str]) -> dict[str, list[str]]:
    out = {}
    for f in files:
        try:
            targets = elf.fatbin_targets(f)
        except (elf.ElfError, OSError) as e:
            out[f] = [f"unreadable: {e}"]
            continue
        if targets is not None:
            out[f] = targets
    return out


def probe_package(spec: dict, cache: dict[str, str]) -> dict:
    name = spec["name"]
    result: dict = {"name": name, "present": importlib.util.find_spec(name) is not None}
    if not result["present"]:
        return result
    files, dists = package_files(name, spec.get("also", []))
    result["distributions"] = dists
    result["import_error"] = import_error(name)
    needed: set[str] = set()
    objects = []
    where: dict[str, str] = {}  # soname -> the file the package's objects load it from
    for f in files:
        try:
            entries = elf.needed(f)
        except (elf.ElfError, OSError):
            continue
        needed.update(entries)
        found, missing = resolve(f)
        where.update(found)
        objects.append({"path": f, "needed": entries, "unresolved": missing})
    result["objects"] = objects
    result["needed"] = sorted(needed)
    result["fatbins"] = fatbins(files)
    loads = []
    for need in spec.get("needs", []):
        library = need["library"]
        if need.get("debian") is False and not by_library(library, needed | set(cache)):
            loads.append({"library": library, "absent_everywhere": True})
            continue
        if need["how"] == "linked":
            names = by_library(library, needed)
            entry = {"library": library, "how": "linked", "linked": names[:1]}
            if names:  # from where the package's own objects find it (their RUNPATH too)
                entry.update(load(where.get(names[0], names[0])))
                entry["name"] = names[0]
        else:
            candidates = need["dlopen"]
            entry = {"library": library, "how": "dlopen", "candidates": candidates}
            for candidate in candidates:
                pick = candidate
                if "*" in candidate:
                    matches = sorted(n for n in cache if fnmatch.fnmatch(n, candidate))
                    pick = matches[-1] if matches else candidate
                entry.update(load(pick))
                if not entry["error"]:
                    break
        loads.append(entry)
    result["loads"] = loads
    return result


def kernel_dir(path: str) -> dict:
    if not os.path.isdir(path):
        return {"exists": False}
    tokens: dict[str, int] = {}
    for root, _, names in os.walk(path):
        for n in names:  # the path below ``path``: AOTriton keeps each arch in amd-gfxNNNN/
            for t in set(TOKEN.findall(os.path.relpath(os.path.join(root, n), path))):
                tokens[t] = tokens.get(t, 0) + 1
    return {"exists": True, "tokens": tokens}


def main() -> int:
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    try:
        with open(ARCH_FILE) as f:
            claimed = f.read().strip()
    except OSError:
        claimed = ""
    cache = ldconfig()
    out: dict = {
        "python": sys.version.split()[0],
        "uid": os.getuid(),
        "gpu_arch_file": claimed,
        "ldconfig_entries": len(cache),
    }
    libraries = []
    for library in spec.get("rocm_libraries", []):
        names = by_library(library, cache)
        entry = {"library": library, "found": names[:1]}
        if names:
            entry.update(load(names[0]))
        libraries.append(entry)
    out["libraries"] = libraries
    out["packages"] = [probe_package(p, cache) for p in spec.get("packages", [])]
    kernels = []
    for k in spec.get("kernels", []):
        entry = {"library": k["library"]}
        if "files" in k:
            entry.update(kernel_dir(k["files"]))
            entry["where"] = k["files"]
        else:
            names = by_library(k["fatbin"], cache)
            entry["where"] = cache[names[0]] if names else ""
            entry["exists"] = bool(names)
            if names:
                path = cache[names[0]]
                entry["targets"] = fatbins([path]).get(path, [])
        kernels.append(entry)
    for extra in spec.get("kernel_dirs", []):  # e.g. AOTriton's images inside torch/lib
        spec_pkg, sub = extra["package"], extra["dir"]
        found = importlib.util.find_spec(spec_pkg)
        if found and found.submodule_search_locations:
            path = os.path.join(next(iter(found.submodule_search_locations)), sub)
            entry = {"library": extra["library"], "where": path, **kernel_dir(path)}
            kernels.append(entry)
    out["kernels"] = kernels
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
