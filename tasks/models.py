"""What is annotated: style components, parallel corpora, their pairs, task instances and screening questions."""
from __future__ import annotations

from django.db import models


class Order(models.TextChoices):
    """The correct alternative of an ordering item: S1-S2 when A1 and S1 share a style."""

    S1_S2 = "S1-S2", "S1-S2"
    S2_S1 = "S2-S1", "S2-S1"


class Setup(models.TextChoices):
    QUADRUPLE = "quadruple", "quadruple (A1, A2, S1, S2)"
    TRIPLE = "triple", "triple (A1, S1, S2)"
    STYLE_OR_CONTENT = "style-or-content", "style or content (A1, S1, S2)"


class StyleComponentManager(models.Manager["StyleComponent"]):
    def get_by_natural_key(self, name: str) -> StyleComponent:
        return self.get(name=name)


class StyleComponent(models.Model):
    """A style dimension (formality, simplicity) or characteristic (contraction, number substitution)."""

    class Kind(models.TextChoices):
        DIMENSION = "dimension", "dimension"
        CHARACTERISTIC = "characteristic", "characteristic"

    name = models.SlugField(max_length=64, unique=True, help_text="STEL's `style type`, e.g. formality.")
    label_1 = models.CharField(max_length=64, help_text="Name of style 1, e.g. informal.")
    label_2 = models.CharField(max_length=64, help_text="Name of style 2, e.g. formal.")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.DIMENSION)
    description = models.TextField(blank=True, default="")

    objects = StyleComponentManager()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=~models.Q(label_1=models.F("label_2")), name="component_labels_differ"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.label_1}/{self.label_2})"

    def natural_key(self) -> tuple[str]:
        return (self.name,)

    def label(self, style: int) -> str:
        return self.label_1 if style == 1 else self.label_2


class Corpus(models.Model):
    """A parallel corpus: the same content in the component's two styles."""

    class Format(models.TextChoices):
        ALIGNED = "aligned", "aligned text files"
        TURKCORPUS = "turkcorpus", "TurkCorpus organized TSV"
        PAIRS = "pairs", "CSV/TSV/JSONL pairs"
        STEL = "stel", "STEL TSV export"
        BUILT = "built", "built by a characteristic builder"

    name = models.CharField(max_length=128, unique=True)
    component = models.ForeignKey(StyleComponent, on_delete=models.PROTECT, related_name="corpora")
    source = models.TextField(blank=True, default="", help_text="Where the texts come from (paths, citation).")
    licence = models.CharField(
        max_length=64, blank=True, default="",
        help_text="SPDX identifier of the source data's licence (tasks.licences); empty: not recorded. A licence that "
                  "forbids redistribution keeps the texts out of every export (the ids-only form is offered instead).",
    )
    attribution = models.TextField(blank=True, default="", help_text="Who to credit and cite for the source data.")
    language = models.CharField(max_length=35, default="en", help_text="BCP-47 language tag of the texts (en, de, …).")
    import_format = models.CharField(max_length=16, choices=Format.choices)
    import_params = models.JSONField(default=dict, blank=True, help_text="Seed, thresholds, files, checksums.")
    n_pairs = models.PositiveIntegerField(default=0)
    n_rows_read = models.PositiveIntegerField(default=0)
    n_skipped = models.PositiveIntegerField(default=0, help_text="Rows read but not stored (e.g. too similar).")
    n_instances = models.PositiveIntegerField(default=0, help_text="Imported task instances (STEL format).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "corpora"

    def __str__(self) -> str:
        return self.name


class ParallelPair(models.Model):
    """One unit of the corpus: `text_1` in style 1 and `text_2` in style 2 with the same content."""

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="pairs")
    position = models.PositiveIntegerField(help_text="Order in the source file (0-based).")
    source_id = models.CharField(max_length=128, help_text="Id in the source (line number, TurkCorpus id, …).")
    text_1 = models.TextField()
    text_2 = models.TextField()
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["corpus", "position"]
        constraints = [
            models.UniqueConstraint(fields=["corpus", "source_id"], name="pair_unique_source_id"),
            models.UniqueConstraint(fields=["corpus", "position"], name="pair_unique_position"),
            models.CheckConstraint(condition=~models.Q(text_1="") & ~models.Q(text_2=""), name="pair_texts_nonempty"),
        ]

    def __str__(self) -> str:
        return f"{self.corpus_id}:{self.source_id}"


class GenerationRun(models.Model):
    """One call of instance generation: its parameters make its instances reproducible."""

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="generation_runs")
    setup = models.CharField(max_length=20, choices=Setup.choices)
    seed = models.BigIntegerField()
    count = models.PositiveIntegerField(null=True, blank=True, help_text="Requested count; empty = every pair.")
    params = models.JSONField(default=dict, blank=True)
    n_instances = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.corpus} {self.setup} seed={self.seed}"


class InstanceStatus(models.TextChoices):
    CANDIDATE = "candidate", "candidate"
    VALIDATED = "validated", "validated"
    REJECTED = "rejected", "rejected"
    # Built from a rewrite whose writer asked for erasure: never served, filtered, exported or counted again.
    WITHDRAWN = "withdrawn", "withdrawn"


class TaskInstance(models.Model):
    """A STEL task instance. Texts are stored as shown (A1, A2, S1, S2) with the style (1/2) of each.

    `family` is shared by the triple, quadruple and style-or-content forms drawn from the same anchor and
    sentence pairs, so one participant can be kept from seeing two forms of one instance.
    """

    stel_id = models.CharField(max_length=255, help_text="STEL-style ID, e.g. QQ_formal-12-informal-12_…")
    setup = models.CharField(max_length=20, choices=Setup.choices, db_index=True)
    component = models.ForeignKey(StyleComponent, on_delete=models.PROTECT, related_name="instances")
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="instances")
    generation_run = models.ForeignKey(
        GenerationRun, on_delete=models.CASCADE, null=True, blank=True, related_name="instances"
    )
    position = models.PositiveIntegerField(default=0, help_text="Order within its generation run or import.")
    anchor_pair = models.ForeignKey(
        ParallelPair, on_delete=models.CASCADE, null=True, blank=True, related_name="anchored_instances"
    )
    sentence_pair = models.ForeignKey(
        ParallelPair, on_delete=models.CASCADE, null=True, blank=True, related_name="sentence_instances"
    )
    family = models.CharField(max_length=255, db_index=True, help_text="Same for all setups of one draw.")
    anchor_1 = models.TextField()
    anchor_2 = models.TextField(blank=True, default="", help_text="Empty in triples and style-or-content.")
    sentence_1 = models.TextField()
    sentence_2 = models.TextField()
    anchor_1_style = models.PositiveSmallIntegerField(help_text="1 or 2: the component's style of A1.")
    anchor_2_style = models.PositiveSmallIntegerField(null=True, blank=True)
    sentence_1_style = models.PositiveSmallIntegerField()
    sentence_2_style = models.PositiveSmallIntegerField()
    correct_order = models.CharField(
        max_length=5, choices=Order.choices,
        help_text="S1-S2 when S1 goes with A1 (same style; in style-or-content: S1 is the correct sentence).",
    )
    status = models.CharField(
        max_length=10, choices=InstanceStatus.choices, default=InstanceStatus.CANDIDATE, db_index=True
    )
    published_votes = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Votes for the correct alternative from an imported STEL file."
    )
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["corpus", "setup", "position"]
        constraints = [
            models.UniqueConstraint(fields=["corpus", "stel_id"], name="instance_unique_stel_id"),
            models.UniqueConstraint(
                fields=["generation_run", "anchor_pair"], name="instance_one_per_anchor_pair",
                condition=models.Q(generation_run__isnull=False),
            ),
            models.CheckConstraint(
                condition=models.Q(anchor_1_style__in=[1, 2], sentence_1_style__in=[1, 2], sentence_2_style__in=[1, 2]),
                name="instance_styles_valid",
            ),
            models.CheckConstraint(
                condition=~models.Q(sentence_1_style=models.F("sentence_2_style")), name="instance_sentences_differ"
            ),
        ]
        indexes = [models.Index(fields=["component", "setup", "status"])]

    def __str__(self) -> str:
        return self.stel_id

    @property
    def correct_answer(self) -> str:
        """The answer an annotator should give: the order for quadruples, the sentence otherwise."""
        if self.setup == Setup.QUADRUPLE:
            return self.correct_order
        return "S1" if self.correct_order == Order.S1_S2 else "S2"

    @property
    def correct_alternative(self) -> int:
        """STEL's coding: 1 = order S1-S2, 2 = order S2-S1."""
        return 1 if self.correct_order == Order.S1_S2 else 2


class ScreeningQuestion(models.Model):
    """An item with an unambiguous answer, mixed into batches to screen out inattentive workers."""

    name = models.SlugField(max_length=64, unique=True)
    component = models.ForeignKey(StyleComponent, on_delete=models.PROTECT, related_name="screening_questions")
    anchor_1 = models.TextField()
    anchor_2 = models.TextField(help_text="Shown only in the quadruple setup.")
    sentence_1 = models.TextField()
    sentence_2 = models.TextField()
    correct_order = models.CharField(max_length=5, choices=Order.choices)
    active = models.BooleanField(default=True)
    setups = models.JSONField(
        default=list, blank=True,
        help_text='Setups the question is an obvious item for, e.g. ["quadruple"]: a question whose answer needs '
                  "A2 to be clear is no fair check in a triple. Empty: every setup.",
    )
    source = models.CharField(max_length=200, blank=True, default="")
    language = models.CharField(
        max_length=35, default="en", db_index=True,
        help_text="BCP-47 language tag of its texts (en, fr, pt-BR, …): a study draws only questions in its language.")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def fits(self, setup: str) -> bool:
        return not self.setups or setup in self.setups

    def correct_answer_for(self, setup: str) -> str:
        return screening_answer_for(correct_order=self.correct_order, setup=setup)


def screening_answer_for(*, correct_order: str, setup: str) -> str:
    """A screening question's correct answer in a setup: its order for quadruples, the sentence for triples."""
    if setup == Setup.QUADRUPLE:
        return correct_order
    return "S1" if correct_order == Order.S1_S2 else "S2"


class NumberSubstitutionCandidate(models.Model):
    """A sentence that may use number substitutions ("4ever", "d00d"), waiting for a researcher's translation.

    Accepted candidates become pairs of an `nbr_substitution` corpus: the translation is style 1 (plain), the
    original text style 2 (substituted).
    """

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        ACCEPTED = "accepted", "accepted"
        REJECTED = "rejected", "rejected"

    text = models.TextField(help_text="The sentence as found (style 2: substituted).")
    matched_tokens = models.JSONField(default=list, blank=True, help_text="Tokens that looked like substitutions.")
    translation = models.TextField(blank=True, default="", help_text="The sentence without substitutions (style 1).")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING, db_index=True)
    source_file = models.CharField(max_length=500, help_text="File the sentence was found in.")
    line_number = models.PositiveIntegerField(help_text="1-based line of the sentence in the source file.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["source_file", "line_number"]
        constraints = [
            models.UniqueConstraint(fields=["source_file", "line_number"], name="nsubs_candidate_unique_line"),
            # An accepted candidate becomes a pair, and a pair needs both texts.
            models.CheckConstraint(
                condition=~models.Q(status="accepted", translation=""), name="nsubs_candidate_accepted_translated",
                violation_error_message="An accepted candidate needs a translation.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source_file}:{self.line_number}"
