"""The REST API: /api/v1/ (versioned), the OpenAPI schema and its two viewers."""

from django.urls import include, path, re_path, register_converter
from rest_framework.response import Response
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from . import pages
from .exceptions import api_not_found
from .views import auth, autolabel, corpus, draws, faithfulness, gold, learned, projects, protocols, qa, units, work, workflow

app_name = "api"


class IdConverter:
    """A database id: up to 18 digits, so that any id in a URL fits a 64-bit integer column."""

    regex = "[0-9]{1,18}"

    def to_python(self, value):
        return int(value)

    def to_url(self, value):
        return str(value)


register_converter(IdConverter, "id")


class SwaggerView(SpectacularSwaggerSplitView):
    """Swagger UI with its start-up script served from this URL (``?script``), not inline: the
    Content-Security-Policy allows scripts from the site only (settings.CONTENT_SECURITY_POLICY)."""

    http_method_names = ["get", "head"]  # an HTML page: OPTIONS would have no template to render


class SchemaView(SpectacularAPIView):
    """The OpenAPI schema, generated and rendered once per process, API version and format.

    Generating it walks every view and serializer (about 5 s on this machine, 0.5 s on a quiet one), and it
    cannot change while the process runs: the schema is public to every signed-in user (SERVE_PUBLIC), so
    one copy serves them all. Rendering it as YAML took another 0.19 s a request (docs/benchmarks.md,
    "Old and new in the same hour again"), so the bytes are kept too, by version and media type."""

    _generated: dict = {}
    _rendered: dict = {}  # (version, media type) -> (body, Content-Type)

    def _get_schema_response(self, request):
        version = self.api_version or request.version or self._get_version_parameter(request)
        if version not in self._generated:
            generator = self.generator_class(urlconf=self.urlconf, api_version=version, patterns=self.patterns)
            self._generated[version] = generator.get_schema(request=request, public=self.serve_public)
        self.schema_version = version
        return Response(
            data=self._generated[version],
            headers={"Content-Disposition": f'inline; filename="{self._get_filename(request, version)}"'},
        )

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if response.status_code != 200 or not hasattr(self, "schema_version"):
            return response  # a refusal (no login) or an error: rendered as usual
        key = (self.schema_version, response.accepted_media_type)
        if key not in self._rendered:
            response.render()
            self._rendered[key] = (response.content, response["Content-Type"])
        response.content, response["Content-Type"] = self._rendered[key]  # marks the response rendered
        return response


class RedocView(SpectacularRedocView):
    """ReDoc, started by static/js/redoc-init.js. Its menu always asks for Redocly's logo from their CDN (no
    setting hides it); the Content-Security-Policy blocks that image, so the page makes no outside request."""

    http_method_names = ["get", "head"]

project_patterns = [
    path("", projects.ProjectDetailView.as_view(), name="project-detail"),
    path("protocol/", protocols.ProtocolView.as_view(), name="project-protocol"),
    path("members/", projects.MemberListView.as_view(), name="member-list"),
    path("members/<id:user_id>/", projects.MemberDetailView.as_view(), name="member-detail"),
    path("imports/", corpus.BatchListView.as_view(), name="import-list"),
    path("imports/<id:pk>/", corpus.BatchDetailView.as_view(), name="import-detail"),
    path("dialogues/", corpus.DialogueListView.as_view(), name="dialogue-list"),
    path("dialogues/<id:pk>/", corpus.DialogueDetailView.as_view(), name="dialogue-detail"),
    path("turns/", corpus.TurnListView.as_view(), name="turn-list"),
    path("turns/<id:pk>/", corpus.TurnDetailView.as_view(), name="turn-detail"),
    path("sentences/", corpus.SentenceListView.as_view(), name="sentence-list"),
    path("sentences/<id:pk>/", corpus.SentenceDetailView.as_view(), name="sentence-detail"),
    path("gold/", corpus.GoldListView.as_view(), name="gold-list"),
    path("assignments/", work.AssignmentListView.as_view(), name="assignment-list"),
    path("assignments/<id:pk>/", work.AssignmentDetailView.as_view(), name="assignment-detail"),
    path("annotations/", work.AnnotationListView.as_view(), name="annotation-list"),
    path("assignments/next/", workflow.NextAssignmentView.as_view(), name="assignment-next"),
    path("assignments/<id:pk>/answer/", workflow.AnswerStepView.as_view(), name="assignment-answer"),
    path("assignments/<id:pk>/label/", workflow.PickLabelView.as_view(), name="assignment-label"),
    path("assignments/<id:pk>/undo/", workflow.UndoView.as_view(), name="assignment-undo"),
    path("assignments/<id:pk>/note/", workflow.NoteView.as_view(), name="assignment-note"),
    path("assignments/<id:pk>/evidence/", workflow.EvidenceAddView.as_view(), name="assignment-evidence-add"),
    path("assignments/<id:pk>/evidence/remove/", workflow.EvidenceRemoveView.as_view(),
         name="assignment-evidence-remove"),
    path("assignments/<id:pk>/submit/", workflow.SubmitView.as_view(), name="assignment-submit"),
    path("assignments/<id:pk>/reopen/", work.AssignmentReopenView.as_view(), name="assignment-reopen"),
    path("assignments/<id:pk>/release/", work.AssignmentReleaseView.as_view(), name="assignment-release"),
    path("assignments/<id:pk>/reassign/", work.AssignmentReassignView.as_view(), name="assignment-reassign"),
    path("gold/export/", gold.GoldExportView.as_view(), name="gold-export"),
    path("gold/<id:sentence_id>/override/", gold.GoldOverrideView.as_view(), name="gold-override"),
    path("adjudications/", gold.AdjudicationListView.as_view(), name="adjudication-list"),
    path("adjudications/<id:pk>/", gold.AdjudicationDetailView.as_view(), name="adjudication-detail"),
    path("adjudications/<id:pk>/resolve/", gold.AdjudicationResolveView.as_view(), name="adjudication-resolve"),
    path("reports/agreement/", gold.AgreementReportView.as_view(), name="agreement-report"),
    path("autolabel-jobs/", autolabel.JobListView.as_view(), name="autolabel-job-list"),
    path("autolabel-jobs/estimate/", autolabel.JobEstimateView.as_view(), name="autolabel-job-estimate"),
    path("autolabel-jobs/<id:pk>/", autolabel.JobDetailView.as_view(), name="autolabel-job-detail"),
    path("autolabel-jobs/<id:pk>/cancel/", autolabel.JobCancelView.as_view(), name="autolabel-job-cancel"),
    path("autolabel-jobs/<id:pk>/predictions/", autolabel.PredictionListView.as_view(),
         name="autolabel-prediction-list"),
    path("autolabel-jobs/<id:pk>/evaluation/", autolabel.JobEvaluationView.as_view(),
         name="autolabel-job-evaluation"),
    path("autolabel-jobs/<id:pk>/faithfulness/", faithfulness.JobFaithfulnessView.as_view(),
         name="autolabel-job-faithfulness"),
    path("learned-judge/", learned.LearnedJudgeView.as_view(), name="learned-judge"),
    path("learned-judge/out-of-fold/", learned.LearnedJudgePredictionsView.as_view(), name="learned-judge-out-of-fold"),
    path("learned-judge/train/", learned.LearnedJudgeTrainView.as_view(), name="learned-judge-train"),
    path("learned-judge/label/", learned.LearnedJudgeLabelView.as_view(), name="learned-judge-label"),
    path("autolabel-jobs/<id:pk>/draws/", draws.DrawListView.as_view(), name="autolabel-job-draws"),
    path("questions/", qa.QuestionListView.as_view(), name="question-list"),
    path("questions/<id:pk>/", qa.QuestionDetailView.as_view(), name="question-detail"),
    path("questions/<id:pk>/messages/", qa.QuestionReplyView.as_view(), name="question-reply"),
    path("questions/<id:pk>/close/", qa.QuestionCloseView.as_view(), name="question-close"),
    path("feedback/", qa.FeedbackListView.as_view(), name="feedback-list"),
    path("feedback/<id:pk>/", qa.FeedbackDetailView.as_view(), name="feedback-detail"),
    path("feedback/<id:pk>/acknowledge/", qa.FeedbackAcknowledgeView.as_view(), name="feedback-acknowledge"),
    path("qualification/", qa.QualificationView.as_view(), name="qualification"),
    path("qualification/results/<id:pk>/retry/", qa.QualificationRetryView.as_view(), name="qualification-retry"),
    path("unit-flags/", units.UnitFlagListView.as_view(), name="unit-flag-list"),
]

v1_patterns = [
    path("auth/token/", auth.TokenView.as_view(), name="token"),
    path("me/", auth.MeView.as_view(), name="me"),
    path("projects/", projects.ProjectListView.as_view(), name="project-list"),
    path("projects/<slug:slug>/", include(project_patterns)),
]

urlpatterns = [
    path("v1/", include(v1_patterns)),
    path("schema/", SchemaView.as_view(), name="schema"),
    path("docs/", SwaggerView.as_view(url_name="api:schema"), name="swagger-ui"),
    path("redoc/", RedocView.as_view(url_name="api:schema"), name="redoc"),
    path("token/", pages.token_page, name="token-page"),
    # Last: an unknown API URL answers JSON like every other API error.
    re_path(r"^(?P<rest>.*)$", api_not_found, name="not-found"),
]
