"""Where a webhook may be sent: the guard against server-side request forgery.

A subscription's URL is checked when it is created (400 with offenders at `/url`),
and every delivery resolves the host again and connects to an address it checked
(`checked_addresses`; feed.transport pins the connection to it, with the host name
kept for TLS): a DNS answer that changed since creation to a private address is
refused then. Redirects are never followed (a 3xx is a failed attempt), so no
redirect can lead a delivery elsewhere.

Refused: anything but https (http too when the operator allows private receivers);
credentials in the URL; addresses that are not global — private (RFC 1918, ULA),
loopback, link-local (cloud metadata 169.254.169.254 and fd00:ec2::254 among them),
shared (100.64/10), multicast, reserved, unspecified — and IPv6 forms that carry such
an IPv4 address (mapped, 6to4, Teredo). `GROUNDING_WEBHOOK_ALLOW_PRIVATE=1` (tests,
local runs) allows http, private and loopback receivers; link-local stays refused.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from django.conf import settings

from common.kernel.refusals import Offender
from feed.models import MAX_URL_LENGTH

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# Cloud metadata endpoints outside the link-local ranges.
METADATA = frozenset(
    {ipaddress.ip_address("100.100.100.200"), ipaddress.ip_address("fd00:ec2::254")}
)


@dataclass(frozen=True)
class Target:
    """A checked URL: where to connect (host, port, TLS) and what to request."""

    scheme: str
    host: str
    port: int
    path: str

    @property
    def tls(self) -> bool:
        return self.scheme == "https"


def allow_private() -> bool:
    return bool(getattr(settings, "GROUNDING_WEBHOOK_ALLOW_PRIVATE", False))


def refused_reason(address: IPAddress, *, private_allowed: bool | None = None) -> str | None:
    """Why a delivery may not connect to `address` (None: it may)."""
    private_allowed = allow_private() if private_allowed is None else private_allowed
    if isinstance(address, ipaddress.IPv6Address):
        for embedded in (address.ipv4_mapped, address.sixtofour):
            if embedded is not None:
                return refused_reason(embedded, private_allowed=private_allowed)
        if address.teredo is not None:
            return refused_reason(address.teredo[1], private_allowed=private_allowed)
    if address in METADATA or address.is_link_local:
        return "link-local or metadata address"
    if address.is_multicast or address.is_unspecified or address.is_reserved:
        return "multicast, reserved or unspecified address"
    if address.is_global:
        return None
    if private_allowed and (address.is_private or address.is_loopback):
        return None
    return "private or loopback address"


def parse(url: str) -> tuple[Target | None, list[Offender]]:
    """The URL's target, or the offenders (pointer `/url`) that refuse it as written."""

    def refuse(code: str, detail: str) -> tuple[None, list[Offender]]:
        return None, [Offender("/url", code, detail)]

    if not isinstance(url, str) or not url:
        return refuse("required", "url is required.")
    if len(url) > MAX_URL_LENGTH:
        return refuse("max_length", f"url is longer than {MAX_URL_LENGTH} characters.")
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        return refuse("invalid", "url holds whitespace or control characters.")
    try:
        parts: SplitResult = urlsplit(url)
        port = parts.port
    except ValueError:
        return refuse("invalid", "url is not a URL.")
    schemes = ("https", "http") if allow_private() else ("https",)
    if parts.scheme not in schemes:
        return refuse("https_required", "webhook URLs must be https.")
    if parts.username is not None or parts.password is not None:
        return refuse("credentials_in_url", "url must not carry credentials.")
    host = parts.hostname
    if not host:
        return refuse("invalid", "url names no host.")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    default = 443 if parts.scheme == "https" else 80
    return Target(parts.scheme, host, port or default, path), []


def checked_addresses(target: Target) -> tuple[list[IPAddress], str | None]:
    """The host's addresses as resolved now, and why they are refused (None: every
    one may be connected to). One refused address refuses the host: a name that
    resolves to a public and a private address is a rebinding attempt."""
    try:
        literal = ipaddress.ip_address(target.host)
        found: list[IPAddress] = [literal]
    except ValueError:
        try:
            infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            return [], "the host does not resolve"
        found = list(dict.fromkeys(ipaddress.ip_address(info[4][0]) for info in infos))
    if not found:
        return [], "the host does not resolve"
    for address in found:
        reason = refused_reason(address)
        if reason is not None:
            return found, reason
    return found, None


def url_offenders(url: str) -> list[Offender]:
    """Why a subscription may not use this URL (empty: it may), at `/url`."""
    target, offenders = parse(url)
    if target is None:
        return offenders
    _addresses, reason = checked_addresses(target)
    if reason == "the host does not resolve":
        return [Offender("/url", "unresolvable", "the URL's host does not resolve.")]
    if reason is not None:
        return [Offender("/url", "refused_address", f"the URL resolves to a {reason}.")]
    return []
