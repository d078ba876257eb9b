from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Background jobs"

    def ready(self) -> None:
        from core.parsers import strict_json_types

        strict_json_types()
