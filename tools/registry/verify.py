"""`registry verify` and the signing options of `registry push` (see tools/registry/attest.py)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable

from tools.oci.errors import RegistryError


def add_push_arguments(push: argparse.ArgumentParser) -> None:
    push.add_argument(
        "--attest",
        action="store_true",
        help="attach a CycloneDX SBOM (dpkg and Python packages, read from the image's layers)"
        " and an in-toto SLSA provenance statement to each digest, before its tags",
    )
    push.add_argument(
        "--sign",
        action="store_true",
        help="--attest, and sign each digest, its SBOM and its provenance with cosign"
        " (--key or $COSIGN_KEY; $COSIGN_PASSWORD); what is signed already is left alone",
    )
    push.add_argument(
        "--key",
        help="cosign key: a key file, a KMS URI (awskms://, gcpkms://, hashivault://, ...);"
        " default $COSIGN_KEY (a path, a KMS URI or the key's PEM)",
    )


def add_parser(sub, connection_args: Callable, user_path: Callable) -> None:
    verify = sub.add_parser(
        "verify",
        help="check that every tag of a plan (or REF) names a signed, attested image",
        description="For each tag of --plan (and each REF): the digest it names now, a"
        " signature of that digest by --key, and an SBOM and a provenance statement attached"
        " to it, each signed by --key. With a push plan, also that the tag names the digest"
        " the build made. Exit 1 naming each ref that fails.",
    )
    verify.add_argument(
        "refs", nargs="*", metavar="REF", help="HOST[:PORT]/NAME:TAG or HOST[:PORT]/NAME@sha256:…"
    )
    verify.add_argument("--plan", type=user_path, action="append", help="plan JSON")
    verify.add_argument(
        "--registry", help="[https://]HOST[:PORT][/NAMESPACE] instead of the plan's"
    )
    verify.add_argument(
        "--key",
        help="public key (cosign.pub), or the private key / KMS URI (its public half is"
        " asked of cosign); default $COSIGN_PUBLIC_KEY, else $COSIGN_KEY",
    )
    verify.add_argument(
        "--signature-only",
        action="store_true",
        help="check only the image's signature, not its SBOM and provenance",
    )
    verify.add_argument("--json", action="store_true", help="one JSON document")
    connection_args(verify)


def parse_ref(ref: str) -> tuple[str, str, str]:
    """`[https://]HOST[:PORT]/NAME[:TAG][@DIGEST]` -> (host, name, what to ask for: the
    digest, else the tag, else `latest`); BadReference (a RegistryError) if it is none."""
    from tools.oci.reference import Reference

    r = Reference.parse(ref)
    return r.registry, r.repository, r.identifier


def pinned(ref: str, digest: str | None) -> str:
    """``ref`` pinned to the ``digest`` found (`REF@-` when none was); a ref that names a
    digest already keeps its own."""
    from tools.oci.reference import BadReference, Reference

    try:
        r = Reference.parse(ref)
    except BadReference:
        return f"{ref}@{digest or '-'}"
    if r.digest or not digest:
        return f"{r}" if r.digest else f"{ref}@-"
    return str(r.with_digest(digest))


def cmd_verify(args, clients_of: Callable, log: Callable[[str], None]) -> int:
    from tools.registry.attest import Attester, verify_refs
    from tools.registry.plan import load_plans
    from tools.registry.sign import load_public_key

    if not args.plan and not args.refs:
        raise RegistryError("verify: give --plan PLAN or REF...")
    key = args.key or os.environ.get("COSIGN_PUBLIC_KEY") or None
    public = load_public_key(key)
    targets = []
    for image in load_plans(args.plan, args.registry) if args.plan else []:
        expected = None
        if image.descriptor is not None:
            expected = image.load_descriptor().digest
        for tag, ref in zip(image.tags, image.refs, strict=True):
            targets.append((ref, image.host, image.name, tag, expected))
    for ref in args.refs:
        targets.append((ref, *parse_ref(ref), None))
    clients = clients_of(args)
    attester = Attester(clients, log=log)
    try:
        findings = verify_refs(attester, targets, public, not args.signature_only)
    finally:
        clients.close()
    failed = [f for f in findings if f.problems]
    requests = sum(c.stats.requests for c in clients.by_host.values())
    if args.json:
        doc = {
            "ok": not failed,
            "key": public.hint,
            "refs": [
                {"ref": f.ref, "digest": f.digest, "ok": not f.problems, "problems": f.problems}
                for f in findings
            ],
            "requests": requests,
        }
        print(json.dumps(doc, indent=2))
    else:
        for f in findings:
            if f.problems:
                print(f"FAILED {pinned(f.ref, f.digest)}: {'; '.join(f.problems)}")
            else:
                print(f"verified {pinned(f.ref, f.digest)} ({', '.join(f.checked)})")
    summary = f"{len(findings) - len(failed)}/{len(findings)} refs verified, {requests} requests"
    print(summary, file=sys.stderr)
    if failed:
        print(
            "registry: error: verification failed: " + ", ".join(f.ref for f in failed),
            file=sys.stderr,
        )
        return 1
    return 0
