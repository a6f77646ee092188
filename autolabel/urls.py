from django.urls import path

from autolabel.checks import views as checks_views
from autolabel.endpoints import views as endpoint_views
from autolabel.evaluation import views as evaluation_views
from autolabel.faithfulness import views as faithfulness_views
from autolabel.jobs import views
from autolabel.learned import views as learned_views

app_name = "autolabel"

urlpatterns = [
    path("p/<slug:slug>/autolabel/", views.job_list, name="job_list"),
    path("p/<slug:slug>/autolabel/estimate/", views.job_estimate, name="job_estimate"),
    path("p/<slug:slug>/autolabel/endpoints/", endpoint_views.endpoint_list, name="endpoint_list"),
    path("p/<slug:slug>/autolabel/endpoints/<int:endpoint_id>/", endpoint_views.endpoint_edit, name="endpoint_edit"),
    path("p/<slug:slug>/autolabel/endpoints/<int:endpoint_id>/remove/", endpoint_views.endpoint_delete,
         name="endpoint_delete"),
    path("p/<slug:slug>/autolabel/endpoints/<int:endpoint_id>/test/", endpoint_views.endpoint_test,
         name="endpoint_test"),
    path("p/<slug:slug>/autolabel/endpoint-tests/<int:test_id>/", endpoint_views.endpoint_test_result,
         name="endpoint_test_result"),
    path("p/<slug:slug>/autolabel/jobs/<int:job_id>/", views.job_detail, name="job_detail"),
    path("p/<slug:slug>/autolabel/jobs/<int:job_id>/cancel/", views.job_cancel, name="job_cancel"),
    path("p/<slug:slug>/autolabel/jobs/<int:job_id>/evaluation/", evaluation_views.job_evaluation, name="job_evaluation"),
    path("p/<slug:slug>/autolabel/jobs/<int:job_id>/faithfulness/", faithfulness_views.job_faithfulness,
         name="job_faithfulness"),
    path("p/<slug:slug>/autolabel/jobs/<int:job_id>/faithfulness/csv/", faithfulness_views.job_faithfulness_csv,
         name="job_faithfulness_csv"),
    path("p/<slug:slug>/autolabel/jobs/<int:job_id>/evaluation/compare/", evaluation_views.job_comparison, name="job_comparison"),
    path("p/<slug:slug>/autolabel/jobs/<int:job_id>/checks/", checks_views.job_checks, name="job_checks"),
    path("p/<slug:slug>/autolabel/learned/", learned_views.learned_judge, name="learned_judge"),
    path("p/<slug:slug>/autolabel/learned/<int:judge_id>/out-of-fold/", learned_views.learned_judge_predictions,
         name="learned_judge_predictions"),
    path("p/<slug:slug>/autolabel/learned/train/", learned_views.learned_judge_train, name="learned_judge_train"),
    path("p/<slug:slug>/autolabel/learned/label/", learned_views.learned_judge_label, name="learned_judge_label"),
    path("p/<slug:slug>/autolabel/turns/<int:turn_id>/predictions/", views.turn_predictions, name="turn_predictions"),
]
