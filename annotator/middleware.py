"""Request checks that hold for every route, before any view runs."""

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.http import HttpResponse, HttpResponseBadRequest, JsonResponse
from django.utils.functional import SimpleLazyObject, empty

NUL_IN_QUERY = "A query parameter contains a NUL character (\\u0000), which no field of this site accepts."


class RefuseNulInQueryMiddleware:
    """Answer 400 to a query string holding a NUL character.

    PostgreSQL text cannot hold one: a view that passes a query parameter to a filter (a search box, a
    project slug) answered 500 with a driver error. Forms refuse NUL in what they read; query parameters
    read outside a form are covered here, once, for every page and API endpoint.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        offending = [key for key, values in request.GET.lists()
                     if "\x00" in key or any("\x00" in value for value in values)]
        if offending:
            if request.path.startswith("/api/"):
                # The API's one error body (api/exceptions.py): the parameters at fault as field errors.
                errors = {key.replace("\x00", "\\x00"): [NUL_IN_QUERY] for key in offending}
                return JsonResponse({"status": 400, "code": "invalid", "detail": NUL_IN_QUERY, "errors": errors},
                                    status=400)
            return HttpResponseBadRequest(NUL_IN_QUERY, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


class StaticPolicyCSPMiddleware(CSPMiddleware):
    """django-csp's middleware, with each header built once per policy instead of once per response.

    django-csp builds both headers (the policy and the report-only one) from the settings for every response,
    about 4 % of an annotation request's CPU (docs/benchmarks.md). This site's policy is the same for every
    response: no view changes it (django-csp's ``csp_update``/``csp_replace``/``csp_exempt`` decorators) and no
    page asks for a nonce. Such responses get the header built the first time and kept beside the settings
    object it was built from, so a changed setting (a test's ``settings`` fixture) builds it anew. A response
    or request that does carry a part of its own goes through django-csp unchanged.
    """

    _PER_RESPONSE = ("_csp_config", "_csp_update", "_csp_replace", "_csp_config_ro", "_csp_update_ro",
                     "_csp_replace_ro", "_csp_exempt", "_csp_exempt_ro")
    _HEADERS = ((HEADER, "CONTENT_SECURITY_POLICY", False), (HEADER_REPORT_ONLY, "CONTENT_SECURITY_POLICY_REPORT_ONLY", True))

    def __init__(self, get_response):
        super().__init__(get_response)
        self._built = {}  # report_only -> (the settings' policy object it was built from, the header's value)

    def process_response(self, request, response):
        if (getattr(request, "_csp_nonce", None) is not None
                or any(getattr(response, name, None) is not None for name in self._PER_RESPONSE)
                or (settings.DEBUG and response.status_code in (404, 500))):
            return super().process_response(request, response)
        for header, setting, report_only in self._HEADERS:
            policy = getattr(settings, setting, None)
            value = self._header(policy, report_only)
            excluded = tuple((policy or {}).get("EXCLUDE_URL_PREFIXES", None) or ())
            if value and header not in response and not request.path_info.startswith(excluded):
                response[header] = value
        # As django-csp does: a nonce asked for after the header is written is an error, not a silent gap.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response

    def _header(self, policy, report_only):
        built = self._built.get(report_only)
        if built is None or built[0] is not policy:
            built = self._built[report_only] = (policy, build_policy(report_only=report_only))
        return built[1]


class UnwrapEvaluatedUserMiddleware:
    """Put the signed-in user itself on the request once the login check has loaded it.

    ``request.user`` is a lazy object: every attribute read of it (a page reads dozens: the access getters,
    the templates' role checks) goes through the proxy's ``__getattribute__``, an ``AttributeError`` and
    ``__getattr__``. After ``LoginRequiredMiddleware`` has loaded the user, nothing is left to defer; a user
    not loaded yet stays lazy: this middleware never loads one itself.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        user = request.__dict__.get("user")
        # The type check and reading _wrapped never load the user; only the proxy's other attributes would.
        if isinstance(user, SimpleLazyObject) and user._wrapped is not empty:
            request.user = user._wrapped
        return None


class BrokerUnavailableMiddleware:
    """Answer 503 with the reason when a view's job could not be queued (``annotator.queue.BrokerUnavailable``).

    Every route that starts a job (an import on the project page or in the admin, an export, an auto-label or
    extraction job) sends it inside the request, after its commit; a broker that refuses the message raised
    out of the view as a 500, and the job stayed "pending" for ever. The job is marked failed with the reason
    by then (``annotator.queue``); here the person is told, whatever the page. The API answers in its own error
    shape (``api.exceptions``) before this is reached.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        from django.contrib.messages import get_messages
        from django.template.loader import render_to_string

        from annotator.queue import BrokerUnavailable

        if not isinstance(exception, BrokerUnavailable):
            return None
        # A view that ran to its end before the commit said the job was queued (the admin's "Import #n is
        # queued"): that message must not greet the person on their next page. Reading the messages drops them.
        for _message in get_messages(request):
            pass
        if request.path.startswith("/api/"):
            return JsonResponse({"status": 503, "code": "broker_unavailable", "detail": str(exception)}, status=503)
        if getattr(request, "htmx", False):
            return HttpResponse(str(exception), status=503, content_type="text/plain; charset=utf-8")
        return HttpResponse(render_to_string("errors/broker_unavailable.html", {"reason": str(exception)}),
                            status=503)
