from django.apps import AppConfig


class PlatformsConfig(AppConfig):
    """A crowd platform's side of a study (Prolific, MTurk): accounts, the platform's study, its submissions, the
    decisions and bonuses sent, block lists, webhook events and messages. Sits above `annotation` (which never
    imports it) and below `scoring`."""

    name = "platforms"
    verbose_name = "Crowd platforms"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # app registry: both modules import models, which are ready only now
        from core.erasure import register_eraser
        from platforms.services.erasure import platform_worker_erase  # app registry: see above

        register_eraser(name="platforms", eraser=platform_worker_erase, order=30)
        from platforms import signals  # noqa: F401  (block lists follow WorkerBlock)
