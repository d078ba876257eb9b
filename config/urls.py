from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("tasks.urls")),
    path("api/v1/", include("annotation.api.urls")),
    path("api/v1/", include("platforms.urls")),
    path("api/v1/", include("scoring.urls")),
    path("api/v1/jobs/", include("core.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("", include("annotation.urls")),
]

# JSON error answers under /api/ (the documented shape, nothing of the request echoed); Django's pages elsewhere.
handler400 = "core.middleware.bad_request"
handler404 = "core.middleware.page_not_found"
handler500 = "core.middleware.server_error"
