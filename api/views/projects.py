"""Projects, their settings and their members."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.response import Response

from annotator.access import projects_for, role_in
from annotator.models import Membership, Project
from annotator.projects.services import membership_add, membership_remove, membership_set_role, project_update_settings

from ..pagination import PagePagination
from ..permissions import LEADS, ProjectScopedView
from ..serializers import (
    MemberAddSerializer,
    MemberRemovedSerializer,
    MemberRoleSerializer,
    MemberSerializer,
    ProjectSerializer,
    ProjectSettingsSerializer,
)

PROJECT_EXAMPLE = {
    "slug": "cognibench-pilot", "name": "CogniBench pilot", "guidelines": "Judge each sentence against the context.",
    "overlap": 2, "protocol_mode": "sequential", "show_prelabels": False, "require_evidence": False,
    "qualification_pass_mark": 0.85, "qualification_auto_retries": 0, "enable_triplets": False, "enable_severity": False,
    "enable_error_types": False, "severity_threshold": 4, "error_types": ["contradiction", "other"],
    "adjudicators_may_annotate": False, "imported_gold": "final", "adjudication_order": "oldest",
    "drawn_turn_review": "double", "default_language": "",
    "created_at": "2026-11-21T09:00:00Z", "my_role": "lead",
}
MEMBER_EXAMPLE = {"user_id": 7, "username": "ada", "role": "annotator", "joined_at": "2026-11-21T09:05:00Z"}
REMOVED_EXAMPLE = {
    "username": "ada", "released_assignments": [41, 42], "closed_flags": [3],
    "detail": "ada: 2 unsubmitted turns released (their slots open for someone else; what they labelled there "
              "stays in the audit); 1 open flag closed with a note (the units stay as they are). Their submitted "
              "work stays.",
}


@extend_schema_view(get=extend_schema(
    summary="Your projects",
    examples=[OpenApiExample("One project", value=PROJECT_EXAMPLE)],
    tags=["projects"],
))
class ProjectListView(generics.ListAPIView):
    serializer_class = ProjectSerializer
    pagination_class = PagePagination
    filter_backends = []

    def get_queryset(self):
        return projects_for(self.request.user).order_by("name")

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        for project in page:
            project.user_role = role_in(request.user, project)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


class ProjectDetailView(ProjectScopedView):
    """A project. Leads change its settings with PATCH."""

    method_roles = {"PATCH": LEADS}
    model = Project
    serializer_class = ProjectSerializer
    filter_backends = []

    @extend_schema(summary="A project", examples=[OpenApiExample("Project", value=PROJECT_EXAMPLE)], tags=["projects"])
    def get(self, request, slug):
        return Response(ProjectSerializer(self.project).data)

    @extend_schema(
        summary="Change settings (leads)",
        request=ProjectSettingsSerializer,
        responses=ProjectSerializer,
        examples=[
            OpenApiExample("Three annotators per turn", value={"overlap": 3, "show_prelabels": False},
                           request_only=True),
            OpenApiExample("Project", value={**PROJECT_EXAMPLE, "overlap": 3}, response_only=True),
        ],
        tags=["projects"],
    )
    def patch(self, request, slug):
        serializer = ProjectSettingsSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        project = project_update_settings(self.project, **serializer.validated_data)
        project.user_role = self.role
        return Response(ProjectSerializer(project).data)


@extend_schema_view(get=extend_schema(summary="Members (leads)", tags=["members"],
                                      examples=[OpenApiExample("Member", value=MEMBER_EXAMPLE)]))
class MemberListView(ProjectScopedView, generics.ListAPIView):
    """The project's members and their roles (leads)."""

    method_roles = {"GET": LEADS, "POST": LEADS}
    model = Membership
    serializer_class = MemberSerializer
    pagination_class = PagePagination
    filter_backends = []

    def project_queryset(self):
        return Membership.objects.filter(project=self.project).select_related("user").order_by("user__username")

    @extend_schema(
        summary="Add a member (leads)",
        request=MemberAddSerializer,
        responses={201: MemberSerializer},
        examples=[
            OpenApiExample("Add an annotator", value={"username": "ada", "role": "annotator"}, request_only=True),
            OpenApiExample("Added", value=MEMBER_EXAMPLE, response_only=True, status_codes=["201"]),
        ],
        tags=["members"],
    )
    def post(self, request, slug):
        serializer = MemberAddSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        membership = membership_add(self.project, **serializer.validated_data, actor=request.user)
        return Response(MemberSerializer(membership).data, status=status.HTTP_201_CREATED)


class MemberDetailView(ProjectScopedView):
    """One member (by user id): change the role or remove them (leads)."""

    method_roles = {"GET": LEADS, "PATCH": LEADS, "DELETE": LEADS}
    model = Membership
    serializer_class = MemberSerializer
    filter_backends = []

    def get_membership(self, user_id):
        return get_object_or_404(Membership.objects.select_related("user", "project"),
                                 project=self.project, user_id=user_id)

    @extend_schema(summary="A member", examples=[OpenApiExample("Member", value=MEMBER_EXAMPLE)], tags=["members"])
    def get(self, request, slug, user_id):
        return Response(MemberSerializer(self.get_membership(user_id)).data)

    @extend_schema(
        summary="Change a member's role (leads)",
        request=MemberRoleSerializer,
        responses=MemberSerializer,
        examples=[
            OpenApiExample("Make adjudicator", value={"role": "adjudicator"}, request_only=True),
            OpenApiExample("Changed", value={**MEMBER_EXAMPLE, "role": "adjudicator"}, response_only=True),
        ],
        tags=["members"],
    )
    def patch(self, request, slug, user_id):
        membership = self.get_membership(user_id)
        serializer = MemberRoleSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        membership = membership_set_role(membership, serializer.validated_data["role"])
        return Response(MemberSerializer(membership).data)

    @extend_schema(
        summary="Remove a member (leads)",
        description="Their unsubmitted slots are released (in the audit; the turns' slots open for someone else) "
                    "and their open unit flags closed with a note; the answer says what was done.",
        responses={200: MemberRemovedSerializer},
        examples=[OpenApiExample("Removed", value=REMOVED_EXAMPLE, response_only=True)],
        tags=["members"],
    )
    def delete(self, request, slug, user_id):
        effects = membership_remove(self.get_membership(user_id), actor=request.user)
        return Response(MemberRemovedSerializer(effects).data)
