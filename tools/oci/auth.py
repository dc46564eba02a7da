"""Registry credentials from the standard docker config, and the token flow.

Credentials come from `$DOCKER_CONFIG/config.json` (default
`~/.docker/config.json`), as the docker CLI reads them: the registry's
`credHelpers` entry, else `credsStore`, names a credential helper
(`docker-credential-<name> get`, the server on stdin, JSON `Username` and
`Secret` on stdout: the protocol of ECR's, GCR's, ACR's, pass and
secretservice); else the `auths` entries docker login writes (`auth` =
base64 "user:password", or `username`/`password`). They are looked up only
when a registry asks for them (a 401), so anonymous and loopback registries
never run a helper. On a 401 the
registry's `WWW-Authenticate` challenge decides: Basic sends the
credentials, Bearer fetches a token from the realm (with the credentials,
if any) for the challenged scopes and retries. Once a realm is known, a
request whose repository's token lacks a scope it needs (push; the source
of a cross-repository mount) gets a new token first, as go-containerregistry
does, instead of a 401 round trip.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Generator, Iterable
from pathlib import Path

import httpx

from tools.oci.credhelpers import helper_path
from tools.oci.errors import RegistryError

_PARAM = re.compile(r'(\w+)="([^"]*)"')
_REPOSITORY = re.compile(r"/v2/(.+?)/(?:blobs|manifests|tags)/")
_ACTIONS = {"GET": "pull", "HEAD": "pull", "DELETE": "delete"}  # others: pull,push
_ORDER = {"pull": 0, "push": 1, "delete": 2}


class CredentialHelper(RegistryError):
    """A docker credential helper could not give the credentials (missing, failed)."""


HELPER_TIMEOUT = 60.0  # a helper may ask a keyring or a cloud's metadata service
_NOT_FOUND = "credentials not found"  # the protocol's answer for an unknown server


def helper_credentials(helper: str, host: str, path: Path) -> tuple[str, str] | None:
    """(user, secret) from `docker-credential-<helper> get` for ``host``; None if it has none."""
    search = helper_path()
    exe = shutil.which(f"docker-credential-{helper}", path=search)
    where = (
        f"{path}: credentials for {host} live in the credential helper 'docker-credential-{helper}'"
    )
    if exe is None:
        raise CredentialHelper(
            f"{where}, which is in none of {search or '(no PATH)'}; install it, or run"
            f" `docker login {host}` with a config without it (a build finds the helpers on"
            " the PATH of the shell that ran bazel)"
        )
    try:
        proc = subprocess.run(
            [exe, "get"], input=host, capture_output=True, text=True, timeout=HELPER_TIMEOUT
        )
    except subprocess.TimeoutExpired:
        raise CredentialHelper(f"{where}: it gave no answer in {HELPER_TIMEOUT:.0f} s") from None
    except OSError as e:
        raise CredentialHelper(f"{where}: it cannot run ({e.strerror})") from None
    said = " ".join((proc.stdout + proc.stderr).split())
    if proc.returncode != 0:
        if _NOT_FOUND in said.lower():
            return None
        raise CredentialHelper(f"{where}: it failed (exit {proc.returncode}): {said[:300]}")
    try:
        answer = json.loads(proc.stdout)
        user, secret = answer["Username"], answer["Secret"]
    except (ValueError, KeyError, TypeError):
        raise CredentialHelper(
            f"{where}: its answer is not the helper protocol's JSON (Username, Secret)"
        ) from None
    if user == "<token>":
        raise CredentialHelper(
            f"{where}: it holds an identity token (OAuth refresh token), which this tool does"
            " not exchange; log in with a user and password or an access token"
        )
    return str(user), str(secret)


def docker_config_path() -> Path:
    base = os.environ.get("DOCKER_CONFIG") or str(Path.home() / ".docker")
    return Path(base) / "config.json"


def credentials_for(host: str, config: Path | None = None) -> tuple[str, str] | None:
    """(user, password) for ``host`` from the docker config, or None."""
    found = credentials_lookup(host, config)
    return found() if callable(found) else found


def credentials_lookup(
    host: str, config: Path | None = None
) -> tuple[str, str] | Callable[[], tuple[str, str] | None] | None:
    """What the docker config says for ``host``: (user, password), None, or, when a credential
    helper holds them, a function that asks it (call it only when a registry asks). A broken
    config fails here, at once."""
    path = config or docker_config_path()
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise RegistryError(f"{path}: cannot read docker config ({e}); fix or remove it") from None
    helper = (data.get("credHelpers") or {}).get(host) or data.get("credsStore")
    if helper:
        return lambda: helper_credentials(helper, host, path)
    for key, entry in (data.get("auths") or {}).items():
        name = re.sub(r"^https?://", "", key).split("/", 1)[0]
        if name != host:
            continue
        if entry.get("auth"):
            try:
                user, colon, password = base64.b64decode(entry["auth"]).decode().partition(":")
            except (binascii.Error, UnicodeDecodeError):
                colon = ""
            if not colon:
                raise RegistryError(
                    f'{path}: the auth of {host} is not base64 of "user:password";'
                    f" run `docker login {host}` again"
                )
            return user, password
        if entry.get("username"):
            return entry["username"], entry.get("password", "")
    return None


def needed(request: httpx.Request) -> set[tuple[str, str]]:
    """The (resource, action) pairs a request needs: a mount also pulls its source."""
    m = _REPOSITORY.match(request.url.path)
    if not m:
        return set()
    actions = _ACTIONS.get(request.method, "pull,push").split(",")
    pairs = {(f"repository:{m.group(1)}", action) for action in actions}
    source = request.url.params.get("from")
    if request.method == "POST" and source:
        pairs.add((f"repository:{source}", "pull"))
    return pairs


def scopes(pairs: Iterable[tuple[str, str]], first: str = "") -> list[str]:
    """One `TYPE:NAME:ACTIONS` scope per resource: ``first``, then by name; pull, push, ..."""
    by_resource: dict[str, set[str]] = {}
    for resource, action in pairs:
        by_resource.setdefault(resource, set()).add(action)
    out = []
    for resource in sorted(by_resource, key=lambda r: (r != first, r)):
        actions = sorted(by_resource[resource], key=lambda a: (_ORDER.get(a, len(_ORDER)), a))
        out.append(f"{resource}:{','.join(actions)}")
    return out


def _pairs(challenged: Iterable[str]) -> set[tuple[str, str]]:
    """(resource, action) pairs of scopes (`repository:ns/x:pull,push`, `registry:catalog:*`)."""
    out = set()
    for scope in challenged:
        resource, _, actions = scope.rpartition(":")
        out |= {(resource, action) for action in actions.split(",") if resource and action}
    return out


class RegistryAuth(httpx.Auth):
    """httpx auth: answer Basic and Bearer challenges, caching a token per repository."""

    def __init__(
        self,
        host: str,
        creds: tuple[str, str] | Callable[[], tuple[str, str] | None] | None,
    ) -> None:
        """``creds``: the credentials, or a function that finds them, called the first time
        the registry asks (a CredentialHelper it raises is kept in ``note`` for the 401)."""
        self.host = host
        self._find = creds if callable(creds) else None
        self._creds = None if callable(creds) else creds
        self.note = ""
        # repository ('' for /v2/_catalog) -> (the (resource, action) pairs asked, token)
        self.tokens: dict[str, tuple[frozenset[tuple[str, str]], str]] = {}
        self.realm: dict[str, str] = {}  # realm and service, once a Bearer challenge named them
        self.basic = False

    @property
    def creds(self) -> tuple[str, str] | None:
        if self._find is not None:
            find, self._find = self._find, None
            try:
                self._creds = find()
            except CredentialHelper as e:
                self.note = f" ({e})"
        return self._creds

    def _basic_header(self) -> str:
        user, password = self.creds or ("", "")
        return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    @staticmethod
    def _repository(request: httpx.Request) -> str:
        """The repository a request is about ('' for /v2/ and /v2/_catalog).

        Bearer tokens are scoped to repositories, so each repository keeps
        its own; sending another repository's token would cost a 401 and, for
        a streamed upload body, could not be re-sent.
        """
        m = _REPOSITORY.match(request.url.path)
        return m.group(1) if m else ""

    def _token_request(self, pairs: Iterable[tuple[str, str]], first: str) -> httpx.Request:
        """A token request for ``pairs``: one `scope` parameter per repository."""
        params = [("service", self.realm["service"])] if self.realm.get("service") else []
        params += [("scope", scope) for scope in scopes(pairs, first)]
        request = httpx.Request("GET", self.realm["realm"], params=params)
        if self.creds:
            request.headers["Authorization"] = self._basic_header()
        return request

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        repository = self._repository(request)
        want = needed(request)
        if self.basic and self.creds:
            request.headers["Authorization"] = self._basic_header()
        else:
            asked, token = self.tokens.get(repository, (frozenset(), ""))
            if self.realm and want and not want <= asked:  # ask up front for what it lacks
                token = (yield from self._fetch(repository, asked | want)) or token
            if token:
                request.headers["Authorization"] = "Bearer " + token
        response = yield request
        if response.status_code != 401:
            return
        challenge = response.headers.get("WWW-Authenticate", "")
        scheme = challenge.split(" ", 1)[0].lower()
        if scheme == "basic":
            if not self.creds:
                return  # 401 stands; the caller names the fix
            self.basic = True
            request.headers["Authorization"] = self._basic_header()
            yield request
        elif scheme == "bearer":
            params = dict(_PARAM.findall(challenge))
            if "realm" not in params:
                return
            self.realm = {k: params.get(k, "") for k in ("realm", "service")}
            # several scopes come space-separated in one challenge parameter
            token = yield from self._fetch(
                repository, _pairs(params.get("scope", "").split()) | want
            )
            if token:
                request.headers["Authorization"] = "Bearer " + token
                yield request

    def _fetch(
        self, repository: str, pairs: set[tuple[str, str]]
    ) -> Generator[httpx.Request, httpx.Response, str]:
        """A token for ``pairs`` from the realm ('' if refused), kept for ``repository``."""
        response = yield self._token_request(pairs, f"repository:{repository}")
        if response.status_code != 200:
            return ""
        response.read()
        try:
            body = response.json()
        except ValueError:
            return ""
        token = body.get("token") or body.get("access_token") or ""
        if token:
            self.tokens[repository] = (frozenset(pairs), token)
        return token
