"""The pre-labeler's LLM endpoints: the default one (``OPENAI_BASE_URL``), and where a lead's own endpoints may send
requests and keys (autolabel/endpoints/policy.py)."""

import os
from urllib.parse import urlsplit

OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY", "")
OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8765/v1")
# The environment variables an LLM profile may name as its API key (sent as a Bearer token to the
# profile's base URL): these, and any name ending in _API_KEY. Never SECRET_KEY, DATABASE_URL...
LLM_API_KEY_ENV_ALLOWED = [
    name.strip() for name in os.environ.get("LLM_API_KEY_ENV_ALLOWED", "").split(",") if name.strip()
]
# A project's leads add their own endpoints (autolabel/endpoints/): the server then sends requests, and keys,
# where a lead says. The addresses a lead's endpoint may name, and which key variable may go to which of them
# ("VAR=entry,entry;VAR2=entry"). An entry is "https://host:port" or "http://host:port" (that scheme and port
# only), or a bare "host[:port]": https, on 443 unless a port is written; a bare loopback host also allows http
# and, without a port, any port (autolabel/endpoints/policy.py). A key never goes over http but to loopback.
# Default: the offline baseline's loopback host and OPENAI_BASE_URL's scheme, host and port; OPENAI_API_KEY to
# OPENAI_BASE_URL's scheme, host and port only. docs/deploy.md.
_openai = urlsplit(OPENAI_BASE_URL)
try:
    _openai_port = _openai.port or {"http": 80, "https": 443}.get(_openai.scheme.lower())
except ValueError:  # a port out of range: no entry from it
    _openai_port = None
_openai_host = (_openai.hostname or "").lower()
_openai_origin = (f"{_openai.scheme.lower()}://{f'[{_openai_host}]' if ':' in _openai_host else _openai_host}"
                  f":{_openai_port}") if _openai_host and _openai_port else ""
LLM_ENDPOINT_HOSTS = [
    host.strip().lower() for host in os.environ.get("LLM_ENDPOINT_HOSTS", "").split(",") if host.strip()
] or sorted({"127.0.0.1", _openai_origin} - {""})
LLM_API_KEY_HOSTS = {
    variable.strip(): [host.strip().lower() for host in hosts.split(",") if host.strip()]
    for variable, _, hosts in (
        pair.partition("=") for pair in os.environ.get("LLM_API_KEY_HOSTS", "").split(";") if "=" in pair
    )
} or {"OPENAI_API_KEY": [_openai_origin] if _openai_origin else []}
# The Test button's probe (a worker runs it): each of its two requests ends within this long, start to last byte.
LLM_ENDPOINT_TEST_TIMEOUT_SECONDS = float(os.environ.get("LLM_ENDPOINT_TEST_TIMEOUT_SECONDS", "15"))
