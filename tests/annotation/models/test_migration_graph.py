"""Moving a model between modules (annotation/models/ is a package of them) must never create a migration: the
models' state equals what the migrations build, and each app's history is one line (two leaves are two branches'
migrations that met in a merge without a merge migration)."""
from __future__ import annotations

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db.migrations.autodetector import MigrationAutodetector
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.state import ProjectState

PROJECT_APPS = ("core", "tasks", "annotation", "platforms", "scoring")


def test_the_models_state_equals_the_migrations_state() -> None:
    loader = MigrationLoader(None, ignore_no_migrations=True)
    changes = MigrationAutodetector(loader.project_state(), ProjectState.from_apps(apps)).changes(graph=loader.graph)
    assert {label: [m.name for m in migrations] for label, migrations in changes.items()} == {}


@pytest.mark.django_db  # makemigrations checks the applied history against the database first
def test_makemigrations_check_finds_nothing_to_write() -> None:
    try:
        call_command("makemigrations", "--check", "--dry-run", verbosity=0)
    except SystemExit as exc:  # --check exits 1 when a migration would be written
        pytest.fail(f"makemigrations --check wants a new migration (exit {exc.code})")


def test_each_app_has_one_leaf_migration() -> None:
    graph = MigrationLoader(None, ignore_no_migrations=True).graph
    leaves = {label: sorted(name for app, name in graph.leaf_nodes() if app == label) for label in PROJECT_APPS}
    assert {label: len(names) for label, names in leaves.items()} == dict.fromkeys(PROJECT_APPS, 1), leaves


def test_the_annotation_models_keep_their_label_and_tables() -> None:
    models = {model.__name__: model for model in apps.get_app_config("annotation").get_models()}
    assert {name: model._meta.db_table for name, model in models.items()} == {
        name: f"annotation_{name.lower()}" for name in (
            "Study", "StudyItem", "Participant", "Response", "Batch", "Reservation", "PracticeItem",
            "PracticeAnswer", "RewriteSettings", "RewriteReview", "WorkerBlock", "WritingSignal", "ConsentVersion",
        )
    }
    assert all(model.__module__.startswith("annotation.models.") for model in models.values())
