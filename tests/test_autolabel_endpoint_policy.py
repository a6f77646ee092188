"""Where a lead's endpoint may send a key (issue 46, item 9): the scheme, host and port the site allowed, never
plain http but to loopback. The site's lists are the ones the settings derive from ``OPENAI_BASE_URL`` (read in
a fresh interpreter, as a deploy starts), and the refusals come through the lead's endpoints page and again
where a request is built."""

import json
import subprocess
import sys

import pytest

from annotator.domain.vocabulary import Role
from autolabel.endpoints.policy import connection_for, endpoint_refusal, key_refusal
from autolabel.jobs.llm import EndpointConfigurationError
from autolabel.models import LLMProfile
from tests.conftest import ROOT
from tests.factories import ProjectFactory, member

pytestmark = pytest.mark.django_db

KEY = "sk-policy-test-0046"


def site_lists(**environment):
    """``LLM_ENDPOINT_HOSTS`` and ``LLM_API_KEY_HOSTS`` as the settings make them from this environment."""
    code = ("import json; from config.settings import base; "
            "print(json.dumps([base.LLM_ENDPOINT_HOSTS, base.LLM_API_KEY_HOSTS]))")
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", **environment}
    output = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            check=True).stdout
    return json.loads(output.strip().splitlines()[-1])


@pytest.fixture
def openai_site(settings, monkeypatch):
    """The site of a deploy with ``OPENAI_BASE_URL=https://api.openai.com/v1`` and its key."""
    settings.LLM_ENDPOINT_HOSTS, settings.LLM_API_KEY_HOSTS = site_lists(OPENAI_BASE_URL="https://api.openai.com/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return settings


def endpoint_form(base_url, api_key_env="OPENAI_API_KEY"):
    return {"name": "mine", "base_url": base_url, "default_model": "gpt-4o-mini", "api_key_env": api_key_env,
            "input_price_per_million": "", "output_price_per_million": "", "concurrency": "4",
            "timeout_seconds": "10"}


def test_the_lists_derived_from_OPENAI_BASE_URL_name_its_scheme_host_and_port():
    hosts, keys = site_lists(OPENAI_BASE_URL="https://api.openai.com/v1")
    assert hosts == ["127.0.0.1", "https://api.openai.com:443"]
    assert keys == {"OPENAI_API_KEY": ["https://api.openai.com:443"]}


@pytest.mark.parametrize("base_url", ["http://api.openai.com/v1", "http://api.openai.com:443/v1",
                                      "https://api.openai.com:8443/v1"])
def test_the_site_key_goes_nowhere_but_the_allowed_scheme_and_port(openai_site, client, base_url):
    project = ProjectFactory()
    client.force_login(member(project, Role.LEAD))
    response = client.post(f"/p/{project.slug}/autolabel/endpoints/", endpoint_form(base_url))
    assert response.status_code == 400
    assert "is not one the site allows" in response.content.decode() or "may not be sent" in response.content.decode()
    assert not LLMProfile.objects.filter(project=project).exists()


def test_the_allowed_https_address_is_saved(openai_site, client):
    project = ProjectFactory()
    client.force_login(member(project, Role.LEAD))
    response = client.post(f"/p/{project.slug}/autolabel/endpoints/", endpoint_form("https://api.openai.com/v1"))
    assert response.status_code == 302
    assert LLMProfile.objects.get(project=project).base_url == "https://api.openai.com/v1"


def test_a_pinned_port_is_https_on_that_port_only(settings):
    settings.LLM_ENDPOINT_HOSTS = ["api.openai.com:443"]
    settings.LLM_API_KEY_HOSTS = {"OPENAI_API_KEY": ["api.openai.com:443"]}
    assert endpoint_refusal("https://api.openai.com/v1") == ""
    assert key_refusal("OPENAI_API_KEY", "https://api.openai.com/v1") == ""
    assert "http://api.openai.com:443 is not one the site allows" in endpoint_refusal("http://api.openai.com:443/v1")
    assert "over plain http" in key_refusal("OPENAI_API_KEY", "http://api.openai.com:443/v1")


def test_plain_http_with_a_key_is_refused_even_where_the_site_lists_it(settings):
    """An administrator's explicit http:// entry lets keyless requests go there, never a key."""
    settings.LLM_ENDPOINT_HOSTS = ["http://models.internal:8000"]
    settings.LLM_API_KEY_HOSTS = {"OPENAI_API_KEY": ["http://models.internal:8000"]}
    assert endpoint_refusal("http://models.internal:8000/v1") == ""
    assert key_refusal("", "http://models.internal:8000/v1") == ""
    refusal = key_refusal("OPENAI_API_KEY", "http://models.internal:8000/v1")
    assert "may not be sent to http://models.internal:8000: over plain http" in refusal


@pytest.mark.parametrize("base_url", ["http://127.0.0.1:8765/v1", "http://localhost:9000/v1", "http://[::1]:8765/v1"])
def test_a_key_may_go_over_http_to_loopback(settings, base_url):
    settings.LLM_ENDPOINT_HOSTS = ["127.0.0.1", "localhost", "::1"]
    settings.LLM_API_KEY_HOSTS = {"LOCAL_API_KEY": ["127.0.0.1", "localhost", "[::1]:8765"]}
    assert endpoint_refusal(base_url) == ""
    assert key_refusal("LOCAL_API_KEY", base_url) == ""


def test_an_endpoint_saved_on_http_before_the_rule_sends_no_key(openai_site):
    """Checked again where the request is built: an endpoint saved under the old rule is refused there."""
    endpoint = LLMProfile.objects.create(project=ProjectFactory(), name="old", base_url="http://api.openai.com/v1",
                                         api_key_env="OPENAI_API_KEY")
    with pytest.raises(EndpointConfigurationError, match="not one the site allows"):
        connection_for(endpoint)
    openai_site.LLM_ENDPOINT_HOSTS = ["http://api.openai.com"]
    with pytest.raises(EndpointConfigurationError, match="over plain http"):
        connection_for(endpoint)
