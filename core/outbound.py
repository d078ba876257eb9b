"""Where the server connects on a user's behalf: the one check of every URL a researcher or an admin names (a model
endpoint's base URL, a writing-signals rewrite endpoint, a platform account's API URL).

An allow-list of origins decides (`scheme://host[:port]`; the port defaults to the scheme's). An entry may use `*`
for the host — any host whose every address is public — and for the port — any port:

- an entry naming the host (`http://127.0.0.1:8000`, `http://gpu-box.lab:*`) allows exactly that origin, its
  addresses whatever they are: an operator who lists a host means it;
- `https://*` allows any https host on port 443 whose every resolved address is global (not loopback, private,
  link-local, shared, reserved or multicast): the host is resolved and each address checked;
- anything else is refused, before any connection, with one wording that names the URL as given and nothing about
  what answers there — a closed port, an open port and a web server read the same, so the check cannot be used to
  scan the server's network.

Checked at the door (the start services: nothing stored) and again just before each call (the name may resolve
elsewhere by then). Redirects are never followed by the clients that use it (httpx `follow_redirects=False`)."""
from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

from core.error_codes import URL_NOT_ALLOWED
from core.errors import ApplicationError

DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> str:
    """scheme://host[:port] of a URL, lower-cased: where a call would go."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _parts(url: str) -> tuple[str, str, str] | None:
    """(scheme, host, port as text) of an http(s) URL or allow-list entry; None when it is neither."""
    try:
        parts = urlsplit(url.strip())
        scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
        netloc_port = parts.netloc.rsplit(":", 1)[1] if parts.netloc.count(":") == 1 else ""
        port = "*" if netloc_port == "*" else str(parts.port or DEFAULT_PORTS.get(scheme, ""))
    except ValueError:
        return None
    if scheme not in DEFAULT_PORTS or not host:
        return None
    return scheme, host, port


def _public(host: str, port: int) -> bool:
    """Every address the host resolves to is global (a name that does not resolve is not public)."""
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(a.split("%")[0]).is_global for a in addresses)


def url_allowed(url: str, allowed: Iterable[str]) -> bool:
    target = _parts(url)
    if target is None:
        return False
    scheme, host, port = target
    for entry in allowed:
        rule = _parts(entry)
        if rule is None or rule[0] != scheme or rule[2] not in ("*", port):
            continue
        if rule[1] == host:
            return True
        if rule[1] == "*" and _public(host, int(port)):
            return True
    return False


def outbound_url_check(url: str, *, allowed: Iterable[str], setting: str, label: str = "URL",
                       field: str | None = None) -> str:
    """The URL when the server may connect to it; else one refusal whatever is (or is not) at that address."""
    if url_allowed(url, allowed):
        return url
    raise ApplicationError(
        f"{label}: this server does not connect to {url}. The addresses it may call are set by the server's "
        f"{setting} setting (loopback and private addresses only when listed there).",
        code=URL_NOT_ALLOWED, status=400, field=field, details={"setting": setting})
