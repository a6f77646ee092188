"""Where the server may send a lead's requests, and keys: the site administrator's rule, checked twice.

A project's lead adds endpoints on the project's endpoints page; each is a way for the server to send
requests, with a key read from the server's environment, to an address the lead chose. The administrator
decides (settings, docs/deploy.md):

- ``LLM_ENDPOINT_HOSTS``: the addresses a lead's endpoint may name;
- ``LLM_API_KEY_HOSTS``: which key variable may go to which of them (a variable not listed goes nowhere).

An entry of either list names a scheme, a host and a port, and an address matches it only when all three do
(``allowed``): ``https://host:port`` or ``http://host:port`` exactly (the scheme's port when none is written);
a bare ``host`` or ``host:port`` is https, on 443 when no port is written; for a loopback host (``127.0.0.1``,
``::1``, ``localhost``) a bare entry also allows http, and any port when none is written. Whatever the lists
say, a key never goes over plain http except to a loopback host: on the way, anyone could read it.

The rule is checked when a lead saves an endpoint (the form says why it refuses) and again where a request is
built (``connection_for``): a job, a test or a setting changed since the endpoint was saved never sends a key to
an address it was not allowed for. Redirects are never followed (llm.py, probe.py), so the address checked is
the address reached. Site-wide profiles (no project) are the admin's: only the key variable's name is checked.
"""

from __future__ import annotations

import ipaddress
from typing import NamedTuple
from urllib.parse import urlsplit

from django.conf import settings

from autolabel.jobs.llm import EndpointConfigurationError, api_key_env_refusal, api_key_from_env

DEFAULT_PORTS = {"http": 80, "https": 443}


class Address(NamedTuple):
    scheme: str
    host: str
    port: int

    def __str__(self):
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine itself: a request to it never crosses a network."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def address_of(base_url: str) -> Address | None:
    """The scheme, host and port a request to ``base_url`` goes to; None for anything but http(s) with a host."""
    try:
        parts = urlsplit(base_url or "")
        scheme = parts.scheme.lower()
        port = parts.port or DEFAULT_PORTS.get(scheme)
    except ValueError:  # a port out of range or not a number
        return None
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return Address(scheme, parts.hostname.lower(), port)


def _matches(address: Address, entry: str) -> bool:
    """Whether the settings' ``entry`` allows ``address`` (the rule in the module's docstring)."""
    entry = entry.strip().lower()
    written_scheme = entry.partition("://")[0] if "://" in entry else ""
    if not written_scheme and ":" in entry and not entry.startswith("["):
        try:  # a bare IPv6 address ("::1"): the host alone, not host:port
            entry = f"[{ipaddress.IPv6Address(entry)}]"
        except ValueError:
            pass
    try:
        parts = urlsplit(entry if written_scheme else f"//{entry}")
        port = parts.port
    except ValueError:
        return False
    if parts.hostname != address.host:
        return False
    if written_scheme:
        return address.scheme == written_scheme and address.port == (port or DEFAULT_PORTS.get(written_scheme))
    if is_loopback(address.host):
        return port is None or address.port == port
    return address.scheme == "https" and address.port == (port or 443)


def allowed(address: Address, entries) -> bool:
    return any(_matches(address, entry) for entry in entries)


def endpoint_refusal(base_url: str) -> str:
    """Why a lead's endpoint may not be ``base_url``, or "" when it may."""
    address = address_of(base_url)
    if address is None:
        return "The base URL must be an http:// or https:// address with a host."
    if allowed(address, settings.LLM_ENDPOINT_HOSTS):
        return ""
    listed = ", ".join(settings.LLM_ENDPOINT_HOSTS) or "none"
    return (f"The address {address} is not one the site allows for a project's endpoints (allowed: {listed}). "
            f"The site administrator sets LLM_ENDPOINT_HOSTS.")


def key_refusal(variable: str, base_url: str) -> str:
    """Why the key in ``variable`` may not go to ``base_url`` from a lead's endpoint, or "" when it may."""
    if not variable:
        return ""
    refusal = api_key_env_refusal(variable)
    if refusal:
        return refusal
    address = address_of(base_url)
    if address is not None and address.scheme == "http" and not is_loopback(address.host):
        return (f"The key {variable} may not be sent to {address}: over plain http anyone on the way could read "
                f"it. Use the https:// address (a key goes over http only to this machine's own loopback).")
    hosts = settings.LLM_API_KEY_HOSTS.get(variable, [])
    if address is not None and allowed(address, hosts):
        return ""
    where = str(address) if address else base_url
    listed = ", ".join(hosts) if hosts else "no host"
    return (f"The key {variable} may not be sent to {where} (the site allows it to go to: {listed}). "
            f"The site administrator sets LLM_API_KEY_HOSTS.")


def profile_refusal(profile, base_url: str | None = None) -> str:
    """Why requests may not go out through ``profile`` (to ``base_url``, default its address now), or ""."""
    base_url = base_url if base_url is not None else profile.endpoint_url()
    if profile.project_id is None:
        return api_key_env_refusal(profile.api_key_env)
    return endpoint_refusal(base_url) or key_refusal(profile.api_key_env, base_url)


def connection_for(profile) -> tuple[str, str]:
    """The base URL and key a request through ``profile`` uses now; EndpointConfigurationError if refused."""
    base_url = profile.endpoint_url()
    refusal = profile_refusal(profile, base_url)
    if refusal:
        raise EndpointConfigurationError(refusal)
    return base_url, api_key_from_env(profile.api_key_env)
