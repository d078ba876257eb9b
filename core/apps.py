from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Background jobs"

    def ready(self) -> None:
        # Django: an app's modules load in ready(), once every app's models are loaded (never in apps.py's import)
        from core.parsers import strict_json_types

        strict_json_types()


class StyleCrowdAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with the StyleCrowd site (core/admin/site.py). It lives here, not beside the site: the
    core.admin package registers models on import, which INSTALLED_APPS may not do."""

    default = False  # "core" in INSTALLED_APPS still means CoreConfig
    default_site = "core.admin.site.StyleCrowdAdminSite"

    def ready(self) -> None:
        # The site's class lives in the core.admin package, whose import registers core's admins. Imported first, the
        # site is set up inside that import; left to autodiscover, another app's first registration would set the site
        # up, import the package halfway through, and its registrations would land on a second site that is dropped.
        import core.admin  # noqa: F401

        super().ready()
        from core.admin.site import json_readonly_install  # Django: after the admin's own ready(), as above

        json_readonly_install()
