"""Project scoping and roles for API views, on top of annotator.access.

Every URL under ``/api/v1/projects/<slug>/`` resolves the project through
``access_project`` before the handler runs: someone outside the project gets
404 for every method (the project's existence does not leak), and a member
whose role is not allowed for the method gets 404 as well, as the pages do.
"""

from django.http import Http404
from rest_framework.generics import GenericAPIView

from annotator.access import ADJUDICATING_ROLES, LEAD_ROLES, access_project, blind_turn_ids, metadata_access, refuse_if_blind_in
from annotator.domain.vocabulary import Role

ANY_MEMBER = None
LEADS = LEAD_ROLES
ADJUDICATORS = ADJUDICATING_ROLES  # adjudicators and leads
ANNOTATORS = frozenset({Role.ANNOTATOR, Role.ADJUDICATOR, Role.LEAD})


class ProjectScopedView(GenericAPIView):
    """Base for project views. ``method_roles`` maps an HTTP method to the roles allowed.

    A method missing from ``method_roles`` is open to any member. A role comes from the user's
    membership (superusers are leads everywhere; the staff flag grants nothing).
    """

    method_roles: dict[str, frozenset | None] = {}

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if getattr(self, "swagger_fake_view", False):
            return
        handler = getattr(self, request.method.lower(), None)
        project = access_project(request.user, kwargs["slug"])
        roles = self.roles_for(request.method)
        if handler is not None and roles is not None and project.user_role not in roles:
            raise Http404("No such project")
        self.project = project

    def roles_for(self, method):
        """HEAD is GET's; OPTIONS (what can I do here?) is open to whoever may use some method."""
        if method == "HEAD":
            method = "GET"
        if method == "OPTIONS":
            if any(roles is ANY_MEMBER for roles in self.method_roles.values()) or not self.method_roles:
                return ANY_MEMBER
            if any(m.lower() in self.http_method_names and hasattr(self, m.lower()) and m not in self.method_roles
                   for m in ("GET", "POST", "PUT", "PATCH", "DELETE")):
                return ANY_MEMBER
            return frozenset().union(*self.method_roles.values())
        return self.method_roles.get(method, ANY_MEMBER)

    @property
    def role(self):
        return self.project.user_role

    @property
    def sees_labels(self):
        """Adjudicators and leads read gold and everyone's labels; annotators never do.

        Even then, not on the turns they hold an unsubmitted slot on: lists leave those out
        (``blind_turns``) and a detail of one answers 404.
        """
        return self.role in ADJUDICATING_ROLES

    @property
    def blind_turns(self):
        """The project's turns on which the user holds an unsubmitted slot (a subquery of turn ids)."""
        return blind_turn_ids(self.request.user, self.project)

    def refuse_if_blind(self, message=None):
        """A view of the whole project's gold (report, export, evaluation): 403 while the user is blind on a turn."""
        if message is None:
            refuse_if_blind_in(self.request.user, self.project)
        else:
            refuse_if_blind_in(self.request.user, self.project, message)

    def get_serializer_context(self):
        context = super().get_serializer_context()
        if not getattr(self, "swagger_fake_view", False) and hasattr(self, "project"):
            context["metadata_access"] = metadata_access(self.request.user, self.project)
        return context

    model = None  # the model listed, for schema generation (which runs without a project)

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return self.model.objects.none()
        return self.project_queryset()

    def project_queryset(self):
        raise NotImplementedError(f"{type(self).__name__} lists nothing")
