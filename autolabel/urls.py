from django.urls import path

from . import views
from . import checks_views

app_name = "autolabel"

urlpatterns = [
    path("p/<slug:slug>/autolabel/", views.job_list, name="job_list"),
    path("p/<slug:slug>/autolabel/jobs/<int:job_id>/", views.job_detail, name="job_detail"),
    path("p/<slug:slug>/autolabel/jobs/<int:job_id>/cancel/", views.job_cancel, name="job_cancel"),
    path("p/<slug:slug>/autolabel/jobs/<int:job_id>/evaluation/", views.job_evaluation, name="job_evaluation"),
    path("p/<slug:slug>/autolabel/jobs/<int:job_id>/checks/", checks_views.job_checks, name="job_checks"),
    path("p/<slug:slug>/autolabel/turns/<int:turn_id>/predictions/", views.turn_predictions, name="turn_predictions"),
]
