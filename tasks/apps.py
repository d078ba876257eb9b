from django.apps import AppConfig


class TasksConfig(AppConfig):
    name = "tasks"
    verbose_name = "Corpora and task instances"

    def ready(self) -> None:
        from core.erasure import register_eraser
        from tasks.services.erasure import writer_pairs_erase

        register_eraser(name="tasks", eraser=writer_pairs_erase, order=40)
