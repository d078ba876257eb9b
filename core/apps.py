from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Background jobs"

    def ready(self) -> None:
        from core.parsers import strict_json_types

        strict_json_types()


class StyleCrowdAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with the StyleCrowd site (core/admin/site.py). It lives here, not beside the site: the
    core.admin package registers models on import, which INSTALLED_APPS may not do."""

    default = False  # "core" in INSTALLED_APPS still means CoreConfig
    default_site = "core.admin.site.StyleCrowdAdminSite"

    def ready(self) -> None:
        super().ready()
        from core.admin.site import json_readonly_install

        json_readonly_install()
