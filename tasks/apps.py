from django.apps import AppConfig


class TasksConfig(AppConfig):
    name = "tasks"
    verbose_name = "Corpora and task instances"

    def ready(self) -> None:
        # app registry: both modules import models, which are ready only now
        from core.erasure import register_eraser
        from tasks.services.erasure import writer_pairs_erase  # app registry: see above

        register_eraser(name="tasks", eraser=writer_pairs_erase, order=40)
