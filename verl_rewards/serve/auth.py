"""The service token: where it comes from, where it is refused, how it is checked."""

from __future__ import annotations

import hmac
import ipaddress
import os
import socket
from collections.abc import Mapping
from pathlib import Path

from ..errors import ConfigError

TOKEN_ENV = "VERL_REWARDS_TOKEN"


def load_token(token_file: Path | None, environ: Mapping[str, str] = os.environ) -> str | None:
    """The token from ``token_file`` (first line), else ``VERL_REWARDS_TOKEN``, else None."""
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except OSError as e:
            raise ConfigError(f"cannot read --token-file {token_file}: {e.strerror}") from e
        if not token:
            raise ConfigError(f"--token-file {token_file} is empty; put the token on its first line")
        return token
    token = environ.get(TOKEN_ENV, "").strip()
    return token or None


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(str(i[4][0]).split("%")[0]).is_loopback
                               for i in infos)


def check_bind(host: str, token: str | None) -> None:
    """Refuse to listen beyond this machine without a token."""
    if token is None and not is_loopback(host):
        raise ConfigError(
            f"refusing to serve on {host} without a token: anyone who can reach it could "
            f"use the reward pool. Set {TOKEN_ENV} or --token-file, or bind to 127.0.0.1"
        )


def token_matches(expected: str, authorization: str | None, query_token: str | None,
                  api_key: str | None = None) -> bool:
    """Constant-time check of a ``Bearer`` header, an ``X-API-Key`` header (``api_key``:
    the Open Reward Standard clients' credential, their ``OPENREWARD_API_KEY``) or a
    ``?token=`` value, the first one given."""
    given = ""
    if authorization is not None:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() == "bearer":
            given = value.strip()
    if not given and api_key:
        given = api_key.strip()
    if not given and query_token is not None:
        given = query_token
    return hmac.compare_digest(_bytes(given), _bytes(expected))


def _bytes(text: str) -> bytes:
    # Header bytes that are not UTF-8 reach us as lone surrogates (surrogateescape):
    # encode them as they came rather than fail on them.
    return text.encode("utf-8", "surrogatepass")
