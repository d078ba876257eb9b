"""factory_boy factories for every app. Each app's section is owned by that app's tests."""
from __future__ import annotations

import factory
from django.utils import timezone

from annotation.models import ItemKind, Participant, Response, Study, StudyItem
from tasks.models import Corpus, Order, ParallelPair, ScreeningQuestion, Setup, StyleComponent, TaskInstance


def component(name: str = "formality") -> StyleComponent:
    """The pre-created STEL components come from a data migration."""
    return StyleComponent.objects.get(name=name)


# --- tasks -------------------------------------------------------------------------------------------


class CorpusFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Corpus

    name = factory.Sequence(lambda n: f"corpus-{n}")
    component = factory.LazyFunction(component)
    import_format = Corpus.Format.PAIRS


class ParallelPairFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ParallelPair

    corpus = factory.SubFactory(CorpusFactory)
    position = factory.Sequence(lambda n: n)
    source_id = factory.Sequence(lambda n: str(n))
    text_1 = factory.Sequence(lambda n: f"hey u wanna come over {n}?")
    text_2 = factory.Sequence(lambda n: f"Would you like to come over, {n}?")


class TaskInstanceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TaskInstance

    corpus = factory.SubFactory(CorpusFactory)
    component = factory.SelfAttribute("corpus.component")
    setup = Setup.QUADRUPLE
    stel_id = factory.Sequence(lambda n: f"QQ_informal-{n}-formal-{n}_formal-{n + 1}-informal-{n + 1}")
    family = factory.SelfAttribute("stel_id")
    position = factory.Sequence(lambda n: n)
    anchor_1 = factory.Sequence(lambda n: f"gonna be late lol {n}")
    anchor_2 = factory.Sequence(lambda n: f"I am going to be late {n}.")
    sentence_1 = factory.Sequence(lambda n: f"I would appreciate your help {n}.")
    sentence_2 = factory.Sequence(lambda n: f"pls help me out {n}")
    anchor_1_style = 1
    anchor_2_style = 2
    sentence_1_style = 2
    sentence_2_style = 1
    correct_order = Order.S2_S1


class ScreeningQuestionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ScreeningQuestion

    name = factory.Sequence(lambda n: f"screen-{n}")
    component = factory.LazyFunction(component)
    anchor_1 = "OH, REALLY?"
    anchor_2 = "Oh, is that so?"
    sentence_1 = "Girlfriends is one of my favorite shows on television."
    sentence_2 = "GIRLFRIENDS IS ONE OF MY FAVORITE SHOWS."
    correct_order = Order.S2_S1


# --- annotation --------------------------------------------------------------------------------------


class StudyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Study

    slug = factory.Sequence(lambda n: f"study-{n}")
    item_kind = ItemKind.QUADRUPLE


class StudyItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = StudyItem

    study = factory.SubFactory(StudyFactory)
    instance = factory.SubFactory(TaskInstanceFactory)
    external_id = factory.SelfAttribute("instance.stel_id")
    kind = factory.SelfAttribute("study.item_kind")
    component = factory.SelfAttribute("instance.component")
    family = factory.SelfAttribute("instance.family")
    correct_answer = factory.LazyAttribute(lambda o: o.instance.correct_answer if o.instance else "")
    position = factory.Sequence(lambda n: n)


class ParticipantFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Participant

    study = factory.SubFactory(StudyFactory)
    platform = Participant.Platform.PROLIFIC
    external_id = factory.Sequence(lambda n: f"PID{n:06d}")


class ResponseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Response

    study_item = factory.SubFactory(StudyItemFactory)
    study = factory.SelfAttribute("study_item.study")
    participant = factory.SubFactory(ParticipantFactory, study=factory.SelfAttribute("..study"))
    answer = "S2-S1"
    answered_at = factory.LazyFunction(timezone.now)


# --- scoring -----------------------------------------------------------------------------------------


class AgreementRunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "scoring.AgreementRun"

    study = factory.SubFactory(StudyFactory)
    params = factory.LazyFunction(lambda: {"k": 5, "m": 3, "seed": 0, "resamples": 100})


def annotated_study(
    *,
    answers: list[list[str]],
    study: Study | None = None,
    setup: str = Setup.QUADRUPLE,
    component_name: str = "formality",
    correct_order: str = Order.S2_S1,
    families: list[str] | None = None,
    start: float = 0.0,
) -> tuple[Study, list[StudyItem]]:
    """A study whose item i got `answers[i]` from participants p0, p1, … in that time order (one second apart).

    Answers are orders (S1-S2 / S2-S1) for quadruples and sentences (S1 / S2) otherwise."""
    import datetime as _dt

    study = study or StudyFactory(item_kind=setup)
    corpus = CorpusFactory(component=component(component_name))
    people: dict[int, Participant] = {}
    items = []
    base = _dt.datetime(2026, 1, 1, tzinfo=_dt.UTC) + _dt.timedelta(seconds=start)
    for index, votes in enumerate(answers):
        family = families[index] if families else f"{corpus.name}-fam-{index}"
        instance = TaskInstanceFactory(corpus=corpus, setup=setup, correct_order=correct_order, family=family,
                                       anchor_2="" if setup != Setup.QUADRUPLE else "I am going to be late.")
        item = StudyItemFactory(study=study, instance=instance, kind=setup)
        items.append(item)
        for rater, answer in enumerate(votes):
            person = people.get(rater) or Participant.objects.filter(study=study, external_id=f"p{rater}").first()
            if person is None:
                person = ParticipantFactory(study=study, external_id=f"p{rater}")
            people[rater] = person
            Response.objects.create(
                study=study, participant=person, study_item=item, answer=answer,
                is_correct=answer == item.correct_answer, answered_at=base + _dt.timedelta(seconds=index * 10 + rater),
                seconds=5.0 + rater,
            )
    return study, items
