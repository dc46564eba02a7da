"""Reaching the mirrors from this host as the builds do: their credentials and CA bundle.

For the tools that read a mirror themselves (`mirrors check --probe`, the
rehearsal's lock and stand-in upstream) rather than through a build step.
"""

from __future__ import annotations

import netrc
import ssl
import urllib.request

from tools.mirrors.secrets import Resolved
from tools.mirrors.settings import MirrorError


def opener(resolved: Resolved, url: str) -> urllib.request.OpenerDirector:
    """A urllib opener for ``url`` that trusts the settings' CA bundle and sends the
    netrc credentials of its host (Basic auth, when the server asks)."""
    context = ssl.create_default_context(cafile=resolved.ca_bundle or None)
    handlers: list[urllib.request.BaseHandler] = [urllib.request.HTTPSHandler(context=context)]
    if resolved.netrc:
        host = url.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0]
        try:
            auth = netrc.netrc(resolved.netrc).authenticators(host)
        except (OSError, netrc.NetrcParseError) as e:
            raise MirrorError(f"{resolved.netrc}: {e}") from None
        if auth:
            manager = urllib.request.HTTPPasswordMgrWithDefaultRealm()
            manager.add_password(None, url, auth[0], auth[2] or "")
            handlers.append(urllib.request.HTTPBasicAuthHandler(manager))
    return urllib.request.build_opener(*handlers)


def read(resolved: Resolved, url: str, timeout: float = 60.0) -> bytes:
    """The body of ``url``; raises OSError (urllib's errors) when it cannot be had."""
    with opener(resolved, url).open(url, timeout=timeout) as response:
        return response.read()


def apt_options(resolved: Resolved) -> list[str]:
    """The settings as apt.conf options for an apt that runs on this host (mmdebstrap):
    the options, the netrc file (apt's methods then run as root to read it) and the CA."""
    out = [f'{key} "{value}"' for key, value in resolved.apt_options]
    if resolved.netrc:
        out += [f'Dir::Etc::netrc "{resolved.netrc}"', 'APT::Sandbox::User "root"']
    if resolved.ca_bundle:
        out.append(f'Acquire::https::CAInfo "{resolved.ca_bundle}"')
    return out
