"""Registry credentials from the standard docker config, and the token flow.

Credentials come from `$DOCKER_CONFIG/config.json` (default
`~/.docker/config.json`), the `auths` entries docker login writes
(`auth` = base64 "user:password", or `username`/`password`). On a 401 the
registry's `WWW-Authenticate` challenge decides: Basic sends the
credentials, Bearer fetches a token from the realm (with the credentials,
if any) for the challenged scope and retries.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Generator
from pathlib import Path

import httpx

from tools.registry.errors import RegistryError

_PARAM = re.compile(r'(\w+)="([^"]*)"')
_REPOSITORY = re.compile(r"/v2/(.+?)/(?:blobs|manifests|tags)/")


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
            user, _, password = base64.b64decode(entry["auth"]).decode().partition(":")
            return user, password
        if entry.get("username"):
            return entry["username"], entry.get("password", "")
    helper = (data.get("credHelpers") or {}).get(host) or data.get("credsStore")
    if helper:
        raise RegistryError(
            f"{path}: credentials for {host} live in the credential helper"
            f" 'docker-credential-{helper}', which this tool does not call; run"
            f" `docker login {host}` with a config without credsStore, or add an auths entry"
        )
    return None


class RegistryAuth(httpx.Auth):
    """httpx auth: answer Basic and Bearer challenges, caching tokens per scope."""

    def __init__(self, host: str, creds: tuple[str, str] | None) -> None:
        self.host = host
        self.creds = creds
        self.tokens: dict[str, str] = {}  # repository -> Bearer token
        self.basic = False

    def _basic_header(self) -> str:
        user, password = self.creds or ("", "")
        return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    @staticmethod
    def _repository(request: httpx.Request) -> str:
        """The repository a request is about ('' for /v2/ and /v2/_catalog).

        Bearer tokens are scoped to one repository, so each repository keeps
        its own; sending another repository's token would cost a 401 and, for
        a streamed upload body, could not be re-sent.
        """
        m = _REPOSITORY.match(request.url.path)
        return m.group(1) if m else ""

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        repository = self._repository(request)
        if self.basic and self.creds:
            request.headers["Authorization"] = self._basic_header()
        elif repository in self.tokens:
            request.headers["Authorization"] = "Bearer " + self.tokens[repository]
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
            scope = params.get("scope", "")
            token_request = httpx.Request(
                "GET",
                params["realm"],
                params={
                    k: v for k, v in (("service", params.get("service")), ("scope", scope)) if v
                },
            )
            if self.creds:
                token_request.headers["Authorization"] = self._basic_header()
            token_response = yield token_request
            if token_response.status_code != 200:
                return
            token_response.read()
            body = token_response.json()
            token = body.get("token") or body.get("access_token")
            if not token:
                return
            self.tokens[repository] = token
            request.headers["Authorization"] = "Bearer " + token
            yield request
