"""Tokens and the caller's identity."""

from django.contrib.auth import authenticate
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotator.access import projects_for, role_in

from ..serializers import MeSerializer, TokenRequestSerializer, TokenSerializer
from ..throttles import LoginThrottle


class TokenView(APIView):
    """Exchange a username and password for your API token (created on first use), or revoke it."""

    public_methods = {"POST"}
    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = [LoginThrottle]

    def get_authenticators(self):
        # POST is open (it is the login); DELETE needs the token it revokes.
        if getattr(self, "request", None) is not None and self.request.method == "DELETE":
            return [auth() for auth in api_settings.DEFAULT_AUTHENTICATION_CLASSES]
        return []

    def get_permissions(self):
        if getattr(self, "request", None) is not None and self.request.method == "DELETE":
            return [IsAuthenticated()]
        return [AllowAny()]

    def get_throttles(self):
        if getattr(self, "request", None) is not None and self.request.method == "DELETE":
            return []
        return [LoginThrottle()]

    @extend_schema(
        request=TokenRequestSerializer,
        responses={200: TokenSerializer},
        examples=[
            OpenApiExample("Login", value={"username": "ada", "password": "correct-horse-battery"}, request_only=True),
            OpenApiExample("Your token", value={"token": "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"},
                           response_only=True),
        ],
        tags=["auth"],
    )
    def post(self, request):
        serializer = TokenRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = authenticate(request._request, **serializer.validated_data)
        if user is None or not user.is_active:
            raise ValidationError({"non_field_errors": ["Unable to log in with the username and password given."]})
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})

    @extend_schema(
        request=None,
        responses={204: OpenApiResponse(description="Token revoked; it no longer authenticates.")},
        tags=["auth"],
    )
    def delete(self, request):
        Token.objects.filter(user=request.user).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeView(APIView):
    """Who you are and your role in each of your projects."""

    @extend_schema(
        responses=MeSerializer,
        examples=[OpenApiExample("An annotator", value={
            "username": "ada", "is_staff": False,
            "projects": [{"slug": "cognibench-pilot", "name": "CogniBench pilot", "role": "annotator"}],
        })],
        tags=["auth"],
    )
    def get(self, request):
        projects = [
            {"slug": p.slug, "name": p.name, "role": role_in(request.user, p)}
            for p in projects_for(request.user).order_by("name")
        ]
        return Response({"username": request.user.get_username(), "is_staff": request.user.is_staff,
                         "projects": projects})
