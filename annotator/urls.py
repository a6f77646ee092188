"""The annotator app's pages; config/urls.py (the URL conf) includes them at the root."""

from django.urls import include, path

from .work import sync_views as annotation_sync
from .claims import views as claims
from .corpus import views as data
from annotator.corpus.units import views as units
from .gold import views as gold
from .projects import console_views as console
from .projects import join_views as join
from .projects import creators_views as creators
from .projects import protocol_views
from .projects import views as home
from .reports import views as reports
from .views import documentation
from .work import views as workspace

urlpatterns = [
    # The annotation screen first (issue 3): Django tries the patterns in order, and these answer most requests
    # (each labelled sentence's save, the screen, submit). No other pattern matches a path of theirs, so the
    # order changes no answer.
    path("a/<int:assignment_id>/", workspace.annotate, name="annotate"),
    path("a/<int:assignment_id>/sync/", annotation_sync.sync, name="annotate_sync"),
    path("a/<int:assignment_id>/<slug:action>/", workspace.act, name="annotate_act"),
    path("", home.home, name="home"),
    path("p/<slug:slug>/", home.project_detail, name="project_detail"),
    # The lead's console: a new project, its settings, its people and invite links (projects/console_views.py)
    path("projects/new/", console.project_create, name="project_create"),
    path("p/<slug:slug>/settings/", console.project_settings, name="project_settings"),
    path("p/<slug:slug>/people/", console.people, name="project_people"),
    path("p/<slug:slug>/people/add/", console.member_add, name="project_member_add"),
    path("p/<slug:slug>/people/<int:user_id>/role/", console.member_role, name="project_member_role"),
    path("p/<slug:slug>/people/<int:user_id>/remove/", console.member_remove, name="project_member_remove"),
    path("p/<slug:slug>/invites/new/", console.invite_create, name="project_invite_create"),
    path("p/<slug:slug>/invites/<int:invite_id>/revoke/", console.invite_revoke, name="project_invite_revoke"),
    # An invite link: the token goes into the session, the page is /join/ (projects/join_views.py)
    path("join/", join.invite_page, name="project_invite"),
    # Site administrators: who may create projects (projects/creators_views.py)
    path("site/project-creators/", creators.creators_page, name="project_creators"),
    path("site/project-creators/<int:user_id>/revoke/", creators.creator_revoke, name="project_creator_revoke"),
    path("join/<str:token>/", join.project_join, name="project_join"),
    path("help/protocol-format/", documentation.protocol_format, name="protocol_format"),
    path("help/languages/", documentation.languages, name="languages_help"),
    path("p/<slug:slug>/protocol/", protocol_views.protocol_page, name="project_protocol"),
    path("p/<slug:slug>/protocol/preview/", protocol_views.protocol_preview, name="project_protocol_preview"),
    # A lead's data pages, imports and exports (views/data.py)
    path("p/<slug:slug>/turns/", data.turn_list, name="turn_list"),
    path("p/<slug:slug>/turns/<int:turn_id>/", data.turn_detail, name="turn_detail"),
    # Units: an annotator's flag, a lead's split / merge / dismissal (corpus/units/views.py)
    path("a/<int:assignment_id>/units/flag/", units.unit_flag, name="unit_flag"),
    path("p/<slug:slug>/turns/<int:turn_id>/units/split/", units.unit_split_view, name="unit_split"),
    path("p/<slug:slug>/turns/<int:turn_id>/units/merge/", units.unit_merge_view, name="unit_merge"),
    path("p/<slug:slug>/units/flags/", units.flag_list, name="unit_flag_list"),
    path("p/<slug:slug>/units/flags/<int:pk>/dismiss/", units.flag_dismiss, name="unit_flag_dismiss"),
    path("p/<slug:slug>/export/<str:fmt>/", data.export, name="project_export"),
    path("p/<slug:slug>/export/<str:fmt>/job/", data.export_job_start, name="export_job_start"),
    path("p/<slug:slug>/exports/<int:job_id>/", data.export_job_status, name="export_job_status"),
    path("p/<slug:slug>/exports/<int:job_id>/download/", data.export_job_download, name="export_job_download"),
    path("p/<slug:slug>/imports/", data.import_list, name="import_list"),
    path("p/<slug:slug>/imports/<int:batch_id>/", data.import_status, name="import_status"),
    path("p/<slug:slug>/imports/new/", data.import_upload, name="import_upload"),
    path("p/<slug:slug>/imports/<int:batch_id>/files/<int:number>/", data.import_file_download,
         name="import_file_download"),
    # Adjudication, gold and reports (adjudicators and leads).
    path("p/<slug:slug>/adjudication/", gold.queue, name="gold_queue"),
    path("adjudication/badge/", gold.nav_badge, name="gold_nav_badge"),
    path("p/<slug:slug>/adjudication/settings/", gold.queue_settings, name="gold_queue_settings"),
    path("p/<slug:slug>/adjudication/turn/<int:turn_id>/", gold.turn_screen, name="gold_turn"),
    path("p/<slug:slug>/adjudication/<int:adjudication_id>/resolve/", gold.resolve, name="gold_resolve"),
    path("p/<slug:slug>/gold/sentence/<int:sentence_id>/", gold.sentence_gold, name="gold_sentence"),
    path("p/<slug:slug>/gold/assignment/<int:assignment_id>/reopen/", gold.reopen, name="gold_reopen"),
    path("p/<slug:slug>/reports/", reports.reports, name="reports"),
    path("p/<slug:slug>/reports/status/", reports.reports_status, name="reports_status"),
    path("p/<slug:slug>/reports/<str:table>.csv", reports.report_csv, name="reports_csv"),
    # Annotation workspace (issue 3)
    path("p/<slug:slug>/work/", workspace.queue, name="workspace_queue"),
    path("p/<slug:slug>/work/next/", workspace.next_item, name="workspace_next"),
    path("p/<slug:slug>/assignments/", workspace.lead_assignments_page, name="workspace_lead"),
    path("p/<slug:slug>/assignments/release-stale/", workspace.lead_release_stale, name="workspace_release_stale"),
    path("p/<slug:slug>/assignments/<int:assignment_id>/release/", workspace.lead_release, name="workspace_release"),
    path("p/<slug:slug>/assignments/<int:assignment_id>/reassign/", workspace.lead_reassign, name="workspace_reassign"),
    path("", include("annotator.qa.urls")),
    # Claims, evidence, severity and error types (RefChecker, PROBE, HalluDetect, Face4RAG views; views/claims.py)
    path("a/<int:assignment_id>/claims/triplets/", claims.triplet_panel, name="claims_triplet_panel"),
    path("a/<int:assignment_id>/claims/<slug:action>/", claims.act, name="claims_act"),
    path("p/<slug:slug>/claims/disputes/", claims.disputes, name="claims_disputes"),
    path("p/<slug:slug>/claims/disputes/<int:adjudication_id>/", claims.dispute_resolve, name="claims_dispute_resolve"),
    path("p/<slug:slug>/claims/turns/<int:turn_id>/", claims.turn_triplets, name="claims_turn_triplets"),
    path("p/<slug:slug>/claims/turns/<int:turn_id>/change/", claims.turn_triplets_change, name="claims_turn_triplets_change"),
    path("p/<slug:slug>/claims/reports/", claims.reports, name="claims_reports"),
]
