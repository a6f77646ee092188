"""Where the server may send a lead's requests, and keys: the site administrator's rule, checked twice.

A project's lead adds endpoints on the project's endpoints page; each is a way for the server to send
requests, with a key read from the server's environment, to an address the lead chose. The administrator
decides (settings, docs/deploy.md):

- ``LLM_ENDPOINT_HOSTS``: the hosts a lead's endpoint may name (``host`` for any port, ``host:port`` for one);
- ``LLM_API_KEY_HOSTS``: which key variable may go to which of them (a variable not listed goes nowhere).

The rule is checked when a lead saves an endpoint (the form says why it refuses) and again where a request is
built (``connection_for``): a job, a test or a setting changed since the endpoint was saved never sends a key to
a host it was not allowed for. Redirects are never followed (llm.py, probe.py), so the address checked is the
address reached. Site-wide profiles (no project) are the admin's: only the key variable's name is checked.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings

from autolabel.jobs.llm import EndpointConfigurationError, api_key_env_refusal, api_key_from_env


def _host_and_port(base_url: str) -> tuple[str, int] | None:
    try:
        parts = urlsplit(base_url or "")
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # a port out of range or not a number
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return parts.hostname.lower(), port


def _listed(host: str, port: int, entries) -> bool:
    entries = {entry.lower() for entry in entries}
    return host in entries or f"{host}:{port}" in entries


def endpoint_refusal(base_url: str) -> str:
    """Why a lead's endpoint may not be ``base_url``, or "" when it may."""
    address = _host_and_port(base_url)
    if address is None:
        return "The base URL must be an http:// or https:// address with a host."
    host, port = address
    if _listed(host, port, settings.LLM_ENDPOINT_HOSTS):
        return ""
    allowed = ", ".join(settings.LLM_ENDPOINT_HOSTS) or "none"
    return (f"The host {host}:{port} is not one the site allows for a project's endpoints (allowed: {allowed}). "
            f"The site administrator sets LLM_ENDPOINT_HOSTS.")


def key_refusal(variable: str, base_url: str) -> str:
    """Why the key in ``variable`` may not go to ``base_url`` from a lead's endpoint, or "" when it may."""
    if not variable:
        return ""
    refusal = api_key_env_refusal(variable)
    if refusal:
        return refusal
    address = _host_and_port(base_url)
    hosts = settings.LLM_API_KEY_HOSTS.get(variable, [])
    if address is not None and _listed(*address, hosts):
        return ""
    where = f"{address[0]}:{address[1]}" if address else base_url
    allowed = ", ".join(hosts) if hosts else "no host"
    return (f"The key {variable} may not be sent to {where} (the site allows it to go to: {allowed}). "
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
