"""Registry credentials from the standard docker config, and the token flow.

Credentials come from `$DOCKER_CONFIG/config.json` (default
`~/.docker/config.json`), the `auths` entries docker login writes
(`auth` = base64 "user:password", or `username`/`password`). On a 401 the
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
from collections.abc import Generator, Iterable
from pathlib import Path

import httpx

from tools.registry.errors import RegistryError

_PARAM = re.compile(r'(\w+)="([^"]*)"')
_REPOSITORY = re.compile(r"/v2/(.+?)/(?:blobs|manifests|tags)/")
_ACTIONS = {"GET": "pull", "HEAD": "pull", "DELETE": "delete"}  # others: pull,push
_ORDER = {"pull": 0, "push": 1, "delete": 2}


class CredentialHelper(RegistryError):
    """The credentials live in a docker credential helper, which this tool does not call."""


def docker_config_path() -> Path:
    base = os.environ.get("DOCKER_CONFIG") or str(Path.home() / ".docker")
    return Path(base) / "config.json"


def credentials_for(host: str, config: Path | None = None) -> tuple[str, str] | None:
    """(user, password) for ``host`` from the docker config, or None."""
    path = config or docker_config_path()
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise RegistryError(f"{path}: cannot read docker config ({e}); fix or remove it") from None
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
    helper = (data.get("credHelpers") or {}).get(host) or data.get("credsStore")
    if helper:
        raise CredentialHelper(
            f"{path}: credentials for {host} live in the credential helper"
            f" 'docker-credential-{helper}', which this tool does not call; run"
            f" `docker login {host}` with a config without credsStore, or add an auths entry"
        )
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

    def __init__(self, host: str, creds: tuple[str, str] | None) -> None:
        self.host = host
        self.creds = creds
        # repository ('' for /v2/_catalog) -> (the (resource, action) pairs asked, token)
        self.tokens: dict[str, tuple[frozenset[tuple[str, str]], str]] = {}
        self.realm: dict[str, str] = {}  # realm and service, once a Bearer challenge named them
        self.basic = False

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
