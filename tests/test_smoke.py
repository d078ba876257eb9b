import pytest
from django.core.management import call_command

from tasks.models import StyleComponent


@pytest.mark.django_db
def test_stel_components_exist_with_their_labels() -> None:
    labels = {c.name: (c.label_1, c.label_2, c.kind) for c in StyleComponent.objects.all()}
    assert labels["formality"] == ("informal", "formal", "dimension")
    assert labels["simplicity"] == ("complex", "simple", "dimension")
    assert labels["contraction"] == ("expanded", "contracted", "characteristic")
    assert labels["nbr_substitution"] == ("plain", "substituted", "characteristic")


@pytest.mark.django_db
def test_no_missing_migrations() -> None:
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_production_settings_refuse_to_start_without_secret(monkeypatch) -> None:
    import importlib
    import sys

    from django.core.exceptions import ImproperlyConfigured

    monkeypatch.delenv("DJANGO_SECRET_KEY", raising=False)
    sys.modules.pop("config.settings.production", None)
    with pytest.raises(ImproperlyConfigured, match="DJANGO_SECRET_KEY"):
        importlib.import_module("config.settings.production")
