"""k-anonymity of released persona values: every released combination is held by at least k people."""
from __future__ import annotations

from collections import Counter

from django.test import override_settings
from hypothesis import given, settings
from hypothesis import strategies as st

from core.anonymity import OTHER, k_anonymity_k, persona_k_anonymize

ATTRIBUTES = {"age": ["18-24", "25-34", "35-44", "45+"], "gender": ["woman", "man", "non-binary"],
              "ethnicity": ["a", "b", "c", "d", "e"], "education": ["school", "degree"]}

persona_strategy = st.fixed_dictionaries({}, optional={a: st.sampled_from(v) for a, v in ATTRIBUTES.items()})


@settings(max_examples=200, deadline=None)
@given(people=st.lists(persona_strategy, max_size=40), k=st.integers(min_value=1, max_value=7))
def test_every_released_combination_is_held_by_at_least_k_people(people, k):
    personas = {f"person-{n}": p for n, p in enumerate(people)}
    result = persona_k_anonymize(personas=personas, k=k)
    assert set(result.released) == set(personas)
    combos = Counter(tuple(sorted(p.items())) for p in result.released.values() if p)
    assert all(n >= k for n in combos.values()), combos
    for person, released in result.released.items():
        # Only coarser: attributes the person gave, each value theirs or "other".
        assert set(released) <= set(personas[person])
        assert all(value in (personas[person][a], OTHER) for a, value in released.items())
    withheld = sum(1 for person, p in personas.items() if p and not result.released[person])
    changed = sum(1 for person, p in personas.items() if result.released[person] and result.released[person] != p)
    assert (result.withheld, result.generalised) == (withheld, changed)


def test_common_combinations_stay_and_rare_values_become_other():
    personas = {n: {"age": "18-24", "gender": "woman"} for n in range(5)}
    personas |= {n: {"age": "18-24", "gender": "man"} for n in range(5, 10)}
    personas[10] = {"age": "18-24", "gender": "non-binary"}
    result = persona_k_anonymize(personas=personas, k=5)
    assert result.released[0] == {"age": "18-24", "gender": "woman"}
    assert result.released[5] == {"age": "18-24", "gender": "man"}
    # One "other" alone is still a cell of one; leaving gender out for all eleven would lose ten values to save
    # one person's two, so that person is withheld instead.
    assert result.released[10] == {}
    assert (result.withheld, result.generalised, result.dropped_attributes) == (1, 0, [])


def test_an_attribute_is_left_out_when_that_loses_less_than_withholding():
    # Each value is common (6 per age, 9 per gender) but every age-gender cell holds 3: withholding would lose all
    # 36 values, leaving one attribute out loses 18 (ties: the first attribute by name goes).
    personas = {n: {"age": "abc"[n % 3], "gender": "wm"[(n // 3) % 2]} for n in range(18)}
    result = persona_k_anonymize(personas=personas, k=5)
    assert result.dropped_attributes == ["age"]
    assert all(result.released[n] == {"gender": personas[n]["gender"]} for n in range(18))
    assert result.generalised == 18 and result.withheld == 0
    assert result.summary()["k"] == 5


def test_a_lone_person_is_withheld_when_nothing_coarser_helps():
    personas = {n: {"age": "25-34"} for n in range(6)} | {"lone": {"age": "45+"}}
    result = persona_k_anonymize(personas=personas, k=5)
    assert result.released["lone"] == {}
    assert result.withheld == 1 and result.generalised == 0
    assert all(result.released[n] == {"age": "25-34"} for n in range(6))


def test_k_comes_from_the_setting():
    with override_settings(STYLECROWD_K_ANONYMITY=3):
        assert k_anonymity_k() == 3
        personas = {n: {"age": "x"} for n in range(3)}
        assert persona_k_anonymize(personas=personas).released[0] == {"age": "x"}
    with override_settings(STYLECROWD_K_ANONYMITY=4):
        assert persona_k_anonymize(personas={n: {"age": "x"} for n in range(3)}).withheld == 3
