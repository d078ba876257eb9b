from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation studies"

    def ready(self) -> None:
        from annotation import admin_review  # noqa: F401  (the rewrite review queue registers its admin)
