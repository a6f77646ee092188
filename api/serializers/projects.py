"""Projects, their settings and members."""

from rest_framework import serializers

from annotator.domain.vocabulary import Role
from annotator.models import Membership, Project
from annotator.projects.console_forms import REQUIRE_EVIDENCE_HELP
from annotator.domain.qualification import MAX_AUTO_RETRIES


class ProjectSerializer(serializers.ModelSerializer):
    my_role = serializers.SerializerMethodField(
        help_text="Your role in the project (from your membership; superusers are leads everywhere).")

    class Meta:
        model = Project
        fields = [
            "slug", "name", "guidelines", "overlap", "protocol_mode", "show_prelabels", "require_evidence",
            "qualification_pass_mark", "qualification_auto_retries", "enable_triplets", "enable_severity",
            "enable_error_types", "severity_threshold", "error_types", "adjudicators_may_annotate", "imported_gold",
            "adjudication_order", "drawn_turn_review", "default_language", "created_at", "my_role",
        ]
        read_only_fields = fields
        extra_kwargs = {"require_evidence": {"help_text": REQUIRE_EVIDENCE_HELP}}

    def get_my_role(self, project) -> str | None:
        return getattr(project, "user_role", None)


class ProjectSettingsSerializer(serializers.ModelSerializer):
    """What a lead may change. Slug and creation date are fixed."""

    error_types = serializers.ListField(child=serializers.CharField(max_length=100), required=False)

    class Meta:
        model = Project
        fields = [
            "name", "guidelines", "overlap", "protocol_mode", "show_prelabels", "require_evidence",
            "qualification_pass_mark", "qualification_auto_retries", "enable_triplets", "enable_severity",
            "enable_error_types", "severity_threshold", "error_types", "adjudicators_may_annotate", "imported_gold",
            "adjudication_order", "drawn_turn_review", "default_language",
        ]
        extra_kwargs = {
            "overlap": {"min_value": 1, "max_value": 10},
            "qualification_pass_mark": {"min_value": 0.0, "max_value": 1.0},
            "qualification_auto_retries": {"min_value": 0, "max_value": MAX_AUTO_RETRIES},
            "severity_threshold": {"min_value": 1, "max_value": 5},
            "require_evidence": {"help_text": REQUIRE_EVIDENCE_HELP},
        }


class MemberSerializer(serializers.ModelSerializer):
    user_id = serializers.IntegerField(source="user.id", read_only=True)
    username = serializers.CharField(source="user.username", read_only=True)

    class Meta:
        model = Membership
        fields = ["user_id", "username", "role", "joined_at"]
        read_only_fields = ["joined_at"]


class MemberAddSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(choices=Role.choices, default=Role.ANNOTATOR)


class MemberRoleSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)


class MemberRemovedSerializer(serializers.Serializer):
    """What removing a member did (``annotator.projects.selectors.RemovalEffects``)."""

    username = serializers.CharField()
    released_assignments = serializers.SerializerMethodField(help_text="Their unsubmitted slots, now released.")
    closed_flags = serializers.SerializerMethodField(help_text="Their open unit flags, now closed with a note.")
    detail = serializers.CharField(source="summary")

    def get_released_assignments(self, effects) -> list[int]:
        return [slot.pk for slot in effects.slots]

    def get_closed_flags(self, effects) -> list[int]:
        return [flag.pk for flag in effects.flags]
