"""ImageBuild: run `docker buildx build` for one image into an OCI layout.

Called by the image rule's ImageBuild action (see images/private/image.bzl),
never by hand. It assembles the build context from the action's declared
inputs as real files (BuildKit does not follow the symlinks Bazel's execroot
is made of), passes each parent image as a named build context pointing at
its OCI layout, and writes `--metadata` JSON with the manifest digest.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

LOG_TAIL = 40


class BuildError(Exception):
    """A user-facing build failure; the message names target, arch and Dockerfile."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="imagebuild", description=__doc__.splitlines()[0])
    p.add_argument("--spec", type=Path, required=True, help="JSON from `tagconf spec`")
    p.add_argument("--dockerfile", type=Path, required=True, help="repository-relative path")
    p.add_argument("--network", choices=["host", "none"], default="host")
    p.add_argument("--output", type=Path, required=True, help="OCI layout directory to write")
    p.add_argument("--metadata", type=Path, required=True, help="metadata JSON to write")
    p.add_argument("--src", action="append", default=[], type=Path, help="context file")
    p.add_argument("--host-file", action="append", default=[], metavar="DEST=ABS", help="host file")
    p.add_argument(
        "--parent", action="append", default=[], metavar="NAME=LAYOUT=METADATA", help="parent"
    )
    p.add_argument("--upstream", metavar="LAYOUT=METADATA", help="stand-in upstream image")
    p.add_argument("--docker", default=os.environ.get("DOCKER", "docker"), help="docker CLI")
    return p


def layout_digest(layout: Path) -> dict[str, object]:
    """The single manifest descriptor of an OCI layout's index.json."""
    index = json.loads((layout / "index.json").read_text())
    manifests = index.get("manifests") or []
    if len(manifests) != 1:
        raise BuildError(f"{layout}: expected one manifest in index.json, got {len(manifests)}")
    return manifests[0]


def assemble_context(ctx: Path, files: list[Path], host_files: list[str]) -> None:
    """Copy each input to its repository-relative path under ``ctx`` as a real file."""
    for src in files:
        if src.is_absolute() or src.parts[0] == "bazel-out":
            raise BuildError(f"{src}: build-context files must be source files of this repository")
        dest = ctx / src
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dest)  # follows the execroot symlink
    for item in host_files:
        dest_name, _, host_path = item.partition("=")
        if not Path(host_path).is_file():
            raise BuildError(f"--host-file {item}: {host_path} does not exist on this host")
        dest = ctx / dest_name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(host_path, dest)


def context_ref(layout: Path, metadata: Path) -> tuple[str, str]:
    """`oci-layout://ABS@DIGEST` for a built image, and its digest."""
    digest = json.loads(metadata.read_text())["digest"]
    return f"oci-layout://{layout.absolute()}@{digest}", digest


def buildx_command(args: argparse.Namespace, spec: dict, ctx: Path) -> tuple[list[str], dict]:
    cmd = [args.docker, "buildx", "build", "--progress=plain"]
    cmd += ["--file", str(ctx / args.dockerfile), "--network", args.network]
    if spec.get("stage"):
        cmd += ["--target", spec["stage"]]
    for key, value in sorted(spec.get("build_args", {}).items()):
        cmd += ["--build-arg", f"{key}={value}"]
    for key, value in sorted(spec.get("labels", {}).items()):
        cmd += ["--label", f"{key}={value}"]
    # One manifest per layout: no provenance/SBOM attestation index.
    cmd += ["--provenance=false", "--sbom=false"]
    parents = {}
    for item in args.parent:
        name, layout, metadata = item.split("=", 2)
        ref, digest = context_ref(Path(layout), Path(metadata))
        cmd += ["--build-context", f"{name}={ref}"]
        parents[name] = digest
    if args.upstream:
        layout, metadata = args.upstream.split("=", 1)
        ref, _ = context_ref(Path(layout), Path(metadata))
        cmd += ["--build-context", f"{spec['upstream']}={ref}"]
    if spec.get("cache_ref"):
        cache = spec["cache_ref"]
        cmd += ["--cache-from", f"type=registry,ref={cache}"]
        cmd += ["--cache-to", f"type=registry,ref={cache},mode=max,ignore-error=true"]
    out = args.output.absolute()
    cmd += ["--output", f"type=oci,dest={out},tar=false,rewrite-timestamp=true", str(ctx)]
    return cmd, parents


def describe(spec: dict, args: argparse.Namespace) -> str:
    return (
        f"target {spec.get('target')}, arch {spec.get('arch') or 'noarch'},"
        f" {args.dockerfile} stage {spec.get('stage') or '(last)'}"
    )


def run(args: argparse.Namespace) -> None:
    spec = json.loads(args.spec.read_text())
    if shutil.which(args.docker) is None:
        raise BuildError(
            f"docker CLI {args.docker!r} not found on PATH; install Docker with buildx"
        )
    with tempfile.TemporaryDirectory(prefix="imagebuild-") as tmp:
        ctx = Path(tmp) / "context"
        ctx.mkdir()
        assemble_context(ctx, [args.dockerfile, *args.src], args.host_file)
        cmd, parents = buildx_command(args, spec, ctx)
        log_path = Path(tmp) / "buildx.log"
        env = dict(os.environ, SOURCE_DATE_EPOCH="0")
        with log_path.open("w") as log:
            proc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, check=False)
        if proc.returncode != 0:
            tail = log_path.read_text(errors="replace").splitlines()[-LOG_TAIL:]
            hint = ""
            if any("Cannot connect to the Docker daemon" in line for line in tail):
                hint = (
                    '\nstart the engine (eval "$(../shared/ci/container-services.sh start)")'
                    " and build with --action_env=DOCKER_HOST --action_env=DOCKER_CONFIG"
                )
            raise BuildError(
                f"image build failed: {describe(spec, args)} (docker buildx exit"
                f" {proc.returncode}); last {len(tail)} lines of BuildKit's log:\n"
                + "\n".join(tail)
                + hint
            )
    manifest = layout_digest(args.output)
    metadata = {
        "target": spec.get("target"),
        "arch": spec.get("arch"),
        "repository": spec.get("repository"),
        "digest": manifest["digest"],
        "media_type": manifest.get("mediaType"),
        "size": manifest.get("size"),
        "tags": spec.get("tags"),
        "refs": spec.get("refs"),
        "dockerfile": str(args.dockerfile),
        "stage": spec.get("stage"),
        "parents": parents,
    }
    args.metadata.write_text(json.dumps(metadata, indent=2, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        run(args)
    except BuildError as e:
        print(f"imagebuild: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
