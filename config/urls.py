"""The URL conf (ROOT_URLCONF): the apps' URL modules, the sign-in pages, the admin and the API."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

# Django tries the patterns in order, and an include it enters without a match costs a list of every pattern it
# tried: the API and the admin, each behind a prefix of its own, come before the two apps' includes at the root
# (the API was the last of ~90 patterns tried; docs/benchmarks.md). No app's route starts with api/ or admin/.
urlpatterns = [
    path("api/", include("api.urls")),
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("annotator.urls")),
    path("", include("autolabel.urls")),
]

# No route serves the private files folder (uploads, exports), DEBUG or not: they are sent only by
# views that check the role (annotator/corpus/views.py).

# A database outage answers 503 with a clear message (annotator/views/errors.py); other errors the default 500 page.
handler500 = "annotator.views.errors.server_error"
