"""Error codes the annotation app raises (studies, participant sessions, answers, review).

A code shared with a lower app is declared there (see core/error_codes.py) and imported from it.
"""
from core.error_codes import ErrorCodes

codes = ErrorCodes(__name__)

ALREADY_PARTICIPATED = codes.declare("already_participated",
                                     "The participant took part from another browser, and this link is not the "
                                     "platform session they finished.")
ANSWER_CONFLICT = codes.declare("answer_conflict",
                                "A different answer to an item this session (or practice) already answered.")
BLOCKED = codes.declare("blocked",
                        "A reviewer blocked this worker (platform and id, every study) after rejected rewrites.")
DUPLICATE_OUTPUT = codes.declare("duplicate_output", "An outputs file names the same system twice for one source.")
ETHNICITY_CATEGORIES_REQUIRED = codes.declare(
    "ethnicity_categories_required",
    "A persona question asks ethnicity without categories that fit the study: PASTEL's US-census list only in an "
    "English study asking for it (ethnicity=pastel), else Prolific's list (ethnicity=prolific) or the researcher's own "
    "categories with labels; see docs/data-protection.md, Ethnicity.")
EXPIRED = codes.declare("expired", "The batch's time limit passed, or its first answer came after the grace period.")
INVALID_KIND = codes.declare("invalid_kind", "A rating preset builds likert or ranking studies only.")
INVALID_LINK = codes.declare("invalid_link",
                             "The link's platform parameters are not what the study accepts; `details` names the "
                             "parameter.")
INVALID_OPTION = codes.declare("invalid_option",
                               "An option's value is not valid (model name, API key variable, metric option, ...).")
INVALID_PRACTICE = codes.declare("invalid_practice", "Practice items are malformed, or the study kind takes none.")
INVALID_PRESET = codes.declare("invalid_preset", "No rating preset of that name, or it has no form of that kind.")
INVALID_REFERENCES = codes.declare("invalid_references", "References must be all or first.")
INVALID_SIDE = codes.declare("invalid_side", "A side must be 1 or 2.")
INVALID_SPLIT_BY = codes.declare("invalid_split_by", "Split by must be persona.ATTRIBUTE.")
INVALID_SPLITS = codes.declare("invalid_splits", "Splits must be three non-negative fractions that sum to 1.")
INVALID_STOP_AFTER = codes.declare("invalid_stop_after", "Stop after is out of 1..k.")
MISSING_FIELD = codes.declare("missing_field", "An outputs row lacks its source or id.")
MISSING_RATE = codes.declare("missing_rate", "A component has no validation rate.")
MISSING_REWRITE_MODEL_URL = codes.declare("missing_rewrite_model_url",
                                          "The rewrite-model writing signal needs the endpoint's URL.")
NO_ITEMS = codes.declare("no_items", "The study has no items for this action.")
NO_SCREENING_IN_LANGUAGE = codes.declare(
    "no_screening_in_language", "The study asks for more screening questions per batch than there are active ones in "
    "its language for its components and setup; the message says how to import or write some.")
NO_PAIRS = codes.declare("no_pairs", "No source has rewrites by writers of both sides of the split.")
NO_REWRITES = codes.declare("no_rewrites", "The study has no accepted rewrites (or every one is flagged).")
NO_WORK_AVAILABLE = codes.declare("no_work_available",
                                  "No more items for this participant (the study is full for them, or maximum batches "
                                  "reached).")
NOT_A_REWRITE_STUDY = codes.declare("not_a_rewrite_study", "The action needs a rewrite study.")
NOT_ADAPTIVE = codes.declare("not_adaptive", "The study is not adaptive, so a guide cannot stop its items early.")
NOT_QUALIFIED = codes.declare("not_qualified",
                              "The worker has too few accepted rewrites, or too low an acceptance rate, for this "
                              "rewrite study.")
NOT_RESERVED = codes.declare("not_reserved", "The item is not reserved for this session.")
PERSONA_FROM_PLATFORM_UNAVAILABLE = codes.declare(
    "persona_from_platform_unavailable",
    "Persona attributes can be read from the platform only in a Prolific study, and only those Prolific records "
    "(age, gender, country, ethnicity, education).")
PLATFORM_MISMATCH = codes.declare("platform_mismatch", "The study takes links of another crowd platform.")
SCREENED_OUT = codes.declare("screened_out", "The participant failed eligibility earlier.")
SESSION_IN_PROGRESS = codes.declare("session_in_progress",
                                    "This participant's batch is open in another browser; no token is returned.")
SPECIAL_CATEGORY_CONSENT_MISSING = codes.declare(
    "special_category_consent_missing",
    "The study asks special-category questions (ethnicity, political orientation, a question marked special_category) "
    "without an explicit-consent statement, or the participant did not tick it.")
SIGNALS_NOT_COMPUTED = codes.declare("signals_not_computed", "Accepted rewrites have no writing signals yet.")
STUDY_BUSY = codes.declare("study_busy",
                           "The study's cap of batches open at once is reached; Retry-After says when to try again.")
TOO_MANY_OPEN_FROM_ADDRESS = codes.declare(
    "too_many_open_from_address",
    "Batches of the study open at once from one client address reached ANNOTATION_MAX_OPEN_BATCHES_PER_ADDRESS; "
    "Retry-After says when to try again.")
TOO_FEW_OUTPUTS = codes.declare("too_few_outputs", "A ranking needs at least two outputs per source.")
UNKNOWN_ITEM = codes.declare("unknown_item", "A guide names items that are not in the study.")
UNKNOWN_STUDY = codes.declare("unknown_study", "No study with that slug.")
UNKNOWN_TARGET_STYLE = codes.declare("unknown_target_style",
                                     "An item's target style is neither label of the component.")
WRONG_STATE = codes.declare("wrong_state",
                            "The call does not fit the current state (of a batch, platform study or bonus row); "
                            "`details.state` may hold it.")
