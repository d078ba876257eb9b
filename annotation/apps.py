from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation studies"

    def ready(self) -> None:
        from annotation.services.erasure import participant_data_erase
        from core.erasure import register_eraser

        register_eraser(name="annotation", eraser=participant_data_erase, order=50)
