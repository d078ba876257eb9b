"""The flush after each transactional test (tests/conftest.py): DELETEs children first instead of one TRUNCATE, and
the migrations' rows are there again afterwards; the slowest modules run first; an xdist group stays whole."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from _pytest.nodeid import NodeId
from django.contrib.auth.models import Permission, User
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.core.management.color import no_style
from django.core.management.sql import sql_flush
from django.db import connection

from annotation.models import Response, Study, StudyItem
from tasks.models import Corpus, StyleComponent, TaskInstance
from tests.conftest import REPO_ROOT, XdistGroups, _children_first, _slowest_first, _slowest_modules
from tests.factories import ResponseFactory


def test_children_come_before_the_tables_they_reference() -> None:
    order = _children_first(["study", "item", "response", "user", "node"],
                            [("item", "study"), ("response", "item"), ("response", "user"), ("node", "node")])
    assert order.index("response") < order.index("item") < order.index("study")
    assert order.index("response") < order.index("user")
    assert sorted(order) == ["item", "node", "response", "study", "user"]  # a self-reference imposes nothing


def test_a_cycle_still_lists_every_table_once() -> None:
    order = _children_first(["a", "b", "c", "leaf", "top"],
                            [("a", "b"), ("b", "a"), ("leaf", "a"), ("c", "leaf"), ("a", "top")])
    assert sorted(order) == ["a", "b", "c", "leaf", "top"]
    assert order.index("c") < order.index("leaf") < order.index("a") < order.index("top")


@pytest.mark.django_db(transaction=True)
def test_the_flush_deletes_every_row_and_the_migrations_rows_come_back() -> None:
    statements = sql_flush(no_style(), connection, reset_sequences=False)
    assert not any(s.startswith("TRUNCATE") for s in statements)
    assert sum(s.startswith("DELETE FROM") for s in statements) == len(
        connection.introspection.django_table_names(only_existing=True, include_views=False))
    ResponseFactory()  # a response, its item, study, instance, corpus and participant: rows in tables that refer on
    User.objects.create_user("flushed")
    assert Response.objects.exists() and StudyItem.objects.exists()

    call_command("flush", verbosity=0, interactive=False, reset_sequences=False, allow_cascade=False)

    for model in (Response, StudyItem, Study, TaskInstance, Corpus, User):
        assert not model.objects.exists(), model
    assert set(StyleComponent.objects.values_list("name", flat=True)) >= {
        "formality", "simplicity", "contraction", "nbr_substitution"}
    assert ContentType.objects.filter(app_label="annotation", model="response").exists()
    assert Permission.objects.filter(codename="view_response").exists()


def test_every_slowest_module_listed_exists() -> None:
    # A module renamed or removed would silently lose its place at the front.
    missing = [path for path in _slowest_modules() if not (REPO_ROOT / path).is_file()]
    assert missing == [], f"tests/slowest_modules.txt lists modules that are gone: {missing}"


def test_the_slowest_modules_come_first_and_the_rest_keep_their_order(monkeypatch: pytest.MonkeyPatch) -> None:
    class Item:
        def __init__(self, nodeid: str) -> None:
            self.nodeid = nodeid

    # a list of its own, so that the test holds whatever the file says (an empty file is the documented A/B)
    slowest = ["tests/slow/test_first.py", "tests/slow/test_second.py"]
    monkeypatch.setattr("tests.conftest._slowest_modules", lambda: slowest)
    items = [Item("tests/test_a.py::one"), Item(f"{slowest[1]}::x"), Item("tests/test_b.py::two"),
             Item(f"{slowest[0]}::y"), Item(f"{slowest[1]}::z"), Item("tests/test_a.py::three")]
    _slowest_first(items)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == [f"{slowest[0]}::y", f"{slowest[1]}::x", f"{slowest[1]}::z",
                                         "tests/test_a.py::one", "tests/test_b.py::two", "tests/test_a.py::three"]


class _Item:
    def __init__(self, nodeid: str, *groups: str) -> None:
        self._id = NodeId.parse(nodeid)
        self.groups = groups

    @property
    def nodeid(self) -> str:
        return str(self._id)

    def iter_markers(self, name: str) -> list[pytest.Mark]:
        return [pytest.mark.xdist_group(group).mark for group in self.groups] if name == "xdist_group" else []


def test_an_xdist_group_reaches_the_scheduler_in_the_test_id() -> None:
    # What xdist's scheduler reads to keep a group in one process (pytest-xdist #1386; see XdistGroups).
    items = [_Item("tests/test_a.py::test_one[0]", "serial"), _Item("tests/test_a.py::test_two"),
             _Item("tests/test_b.py::test_three@serial", "serial")]
    config = SimpleNamespace(option=SimpleNamespace(loadgroup=True))
    XdistGroups().pytest_collection_modifyitems(config, items)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == ["tests/test_a.py::test_one[0]@serial", "tests/test_a.py::test_two",
                                         "tests/test_b.py::test_three@serial"]
