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


@pytest.mark.django_db
def test_openapi_schema_of_the_whole_project_validates_without_warnings(tmp_path) -> None:
    """Every endpoint documents its request and response (drf-spectacular fails on any guess or collision)."""
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yml"))
    schema = (tmp_path / "schema.yml").read_text()
    for path in ("/api/v1/corpora/", "/api/v1/studies/{slug}/sessions/", "/api/v1/sessions/{token}/answers/",
                 "/api/v1/agreement-runs/", "/api/v1/score-runs/", "/api/v1/metric-evaluations/"):
        assert f"{path}:" in schema, path
