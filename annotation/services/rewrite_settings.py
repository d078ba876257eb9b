"""A reviewed rewrite study's own settings, declared once (as annotation.services.study_settings declares a study's):
`rewrite_study_create`'s keywords with their defaults and bounds, which the API body, the admin form and the
`create_study` options take from here."""
from __future__ import annotations

from annotation.models import COPY_THRESHOLD_DEFAULT
from annotation.services.study_settings import StudySetting

# A reviewed rewrite study's own settings (annotation.services.rewrites.rewrite_study_create's keywords; the API
# nests them under `rewrite`, the form and the command prefix some). Declared here for their defaults and bounds,
# which `tests/annotation/services/test_rewrite_settings.py` checks at every door and on `RewriteSettings`.
REWRITE = "rewrite"
REWRITE_SETTINGS: tuple[StudySetting, ...] = (
    StudySetting("min_length", int, 10, "Rewrite min length (characters)", min_value=1, max_value=5000,
                 kinds=REWRITE, cli="--rewrite-min-length"),
    StudySetting("max_length", int, 500, "Rewrite max length (characters)", min_value=1, max_value=5000,
                 kinds=REWRITE, cli="--rewrite-max-length"),
    StudySetting("copy_threshold", float, COPY_THRESHOLD_DEFAULT, "Copy threshold",
                 "Refuse a rewrite this similar (rapidfuzz ratio, 0-100) to its source.", min_value=0,
                 max_value=100, kinds=REWRITE),
    StudySetting("min_words", int, 5, "Min words", "Drop shorter sources (0: no limit).", min_value=0, kinds=REWRITE),
    StudySetting("max_words", int, 25, "Max words", "Drop longer sources (0: no limit).", min_value=0, kinds=REWRITE),
    StudySetting("persona_from_platform", str, "", "Persona from the platform",
                 "Persona attributes read from Prolific's submission demographics instead of asked, comma-separated "
                 "(age, gender, country, ethnicity, education); a Prolific study only.", kinds=REWRITE),
    StudySetting("min_accepted", int, 0, "Qualification: min accepted rewrites", min_value=0, kinds=REWRITE,
                 cli="--qualify-min-accepted"),
    StudySetting("min_rate", float, 0.0, "Qualification: min acceptance rate (0-1)", min_value=0, max_value=1,
                 kinds=REWRITE, cli="--qualify-min-rate"),
)
REWRITE_DEFAULTS = {setting.name: setting.default for setting in REWRITE_SETTINGS}
REWRITE_BY_NAME = {setting.name: setting for setting in REWRITE_SETTINGS}
