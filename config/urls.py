from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularSwaggerSplitView

from collector.health import alive
from config.schema import SchemaView

urlpatterns = [
    path("", include("collector.voting.urls")),  # first: the voting API is the hot path
    path("healthz", alive, name="healthz"),  # the load balancer's health check
    path("admin/", admin.site.urls),
    path("api/v1/schema/", SchemaView.as_view(), name="api-schema"),
    path(
        "api/v1/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"
    ),
    path("", include("collector.releases.urls")),  # public release pages, no login
    path("", include("collector.staff.urls")),
]

handler400 = "collector.api_errors.refused"
handler404 = "collector.api_errors.not_found"
