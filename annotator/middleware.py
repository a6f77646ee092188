"""Request checks that hold for every route, before any view runs."""

from django.http import HttpResponseBadRequest, JsonResponse

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
