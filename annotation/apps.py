from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation studies"

    def ready(self) -> None:
        # app registry: services import models, which are ready only now
        from annotation.services.erasure import participant_data_erase, withdrawn_items_close
        from core.erasure import register_eraser  # app registry: core.erasure imports core's models

        register_eraser(name="annotation", eraser=participant_data_erase, order=50)
        # after the tasks eraser (40), which withdraws the instances built from the person's rewrites
        register_eraser(name="annotation.withdrawn_items", eraser=withdrawn_items_close, order=60)
