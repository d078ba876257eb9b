"""Error codes the scoring app raises (agreement, filtering, exports, metrics, model runs).

A code shared with a lower app is declared there (see core/error_codes.py) and imported from it.
"""
from core.error_codes import ErrorCodes

codes = ErrorCodes(__name__)

BAD_DEVICE = codes.declare("bad_device",
                           "A metric's device is not auto, cpu or cuda, or cuda was asked for without a GPU.")
BAD_ENCODING = codes.declare("bad_encoding", "An annotations file is not valid UTF-8.")
BAD_ITEM = codes.declare("bad_item", "A study item lacks the payload field a metric needs.")
BAD_MODEL = codes.declare("bad_model", "The NLI model has no entailment label.")
BAD_MODEL_PATH = codes.declare("bad_model_path", "A metric's model path is not a local model directory.")
BAD_OPTION = codes.declare("bad_option", "A metric option is not valid (batch size, logprob templates).")
BAD_ROWS = codes.declare("bad_rows", "An annotations file has bad rows; nothing was imported.")
CORRECT_MISMATCH = codes.declare("correct_mismatch", "An imported item has another correct answer already.")
DUPLICATE_RESPONSE = codes.declare("duplicate_response", "An annotator rated the same item and question twice.")
EMPTY_CORPUS = codes.declare("empty_corpus", "The corpus has no pairs.")
EXPORT_CHANGED = codes.declare("export_changed", "An export's file is missing or changed since the export.")
FILE_MISSING = codes.declare("file_missing", "A job's file is no longer on the server.")
FINISHED = codes.declare("finished", "The model run has finished already.")
HUB_ERROR = codes.declare("hub_error", "The hub answered an error.")
HUB_OUTCOME_UNKNOWN = codes.declare("hub_outcome_unknown",
                                    "The hub did not answer an upload; the commit may exist, so a person checks before"
                                    " trying again.")
HUB_RATE_LIMITED = codes.declare("hub_rate_limited", "The hub is rate-limiting; try again later.")
HUB_UNAUTHORIZED = codes.declare("hub_unauthorized", "The hub refused the token.")
HUB_UNREACHABLE = codes.declare("hub_unreachable", "The hub did not answer before anything was uploaded.")
INVALID_ARGUMENTS = codes.declare("invalid_arguments", "The command's options contradict each other.")
INVALID_DECISION = codes.declare("invalid_decision", "A review decision is not accepted, rejected or pending.")
INVALID_ERROR_TYPE = codes.declare("invalid_error_type", "A content-error type is not a known one.")
INVALID_FILE = codes.declare("invalid_file",
                             "The file asked for is not one this record offers, or not an ids-only export.")
INVALID_FORMAT = codes.declare("invalid_format", "An export or plot format is not a known one.")
INVALID_HUB = codes.declare("invalid_hub", "The hub is not a known one.")
INVALID_LEVEL = codes.declare("invalid_level", "A measurement level is not a known one, or does not fit the scale.")
INVALID_OUT = codes.declare("invalid_out", "The output path is not usable for this format.")
INVALID_QUESTION = codes.declare("invalid_question", "A question name is empty.")
ITEM_TEXT_MISMATCH = codes.declare("item_text_mismatch",
                                   "An imported item was imported before with other texts; import into a new slug.")
INVALID_REPO = codes.declare("invalid_repo", "A hub repository name is not ORG/NAME.")
INVALID_RESAMPLES = codes.declare("invalid_resamples", "Bootstrap resamples must be zero or positive.")
INVALID_RULE = codes.declare("invalid_rule", "A filtering rule (m of k, surplus rule) is out of range.")
INVALID_SCALE = codes.declare("invalid_scale", "A rating scale is not MIN-MAX or a list of categories.")
INVALID_SETUP = codes.declare("invalid_setup", "An export's setup is not a known one.")
LICENCE_NOT_RECORDED = codes.declare("licence_not_recorded",
                                     "Exported text comes from a corpus without a recorded licence.")
METHOD = codes.declare("method", "The aggregation method is not a known one.")
MISSING_DEPENDENCY = codes.declare("missing_dependency", "An optional dependency (transformers) is not installed.")
MISSING_MODEL_PATH = codes.declare("missing_model_path", "A metric needs a local model directory.")
MISSING_STUDY = codes.declare("missing_study", "The command needs a study.")
MISSING_TOKEN = codes.declare("missing_token", "No Hugging Face token is set.")
MODEL_NOT_LOADABLE = codes.declare("model_not_loadable", "The model directory could not be loaded.")
NO_CUDA = codes.declare("no_cuda", "CUDA was asked for but torch sees no CUDA device.")
NO_METRICS = codes.declare("no_metrics", "No metrics were given.")
ERASED_PERSON = codes.declare("erased_person", "The import holds rows of a person who asked for their data to be "
                              "erased; the rows are named by line and nothing is imported.")
NO_RATINGS = codes.declare("no_ratings", "The study has no valid ratings for the question.")
NO_RESPONSES = codes.declare("no_responses", "The study has no rankings yet.")
NOT_A_HUB_EXPORT = codes.declare("not_a_hub_export", "Only a hub export can be published.")
NOT_NUMERIC_SCALE = codes.declare("not_numeric_scale", "Ratings of rewrites take a numeric scale (e.g. 1-5).")
UNSUPPORTED_LANGUAGE = codes.declare("unsupported_language",
                                     "A metric does not support the language of the study's texts.")
LLM_RATER_FAILED = codes.declare("llm_rater_failed", "The LLM autorater's endpoint did not answer usably.")
NOT_A_RANKING_STUDY = codes.declare("not_a_ranking_study", "The action needs a ranking study.")
NOT_COMPUTED = codes.declare("not_computed", "The run or evaluation has not finished yet.")
NOT_LIKERT = codes.declare("not_likert", "Metric meta-evaluation needs a likert study.")
NOT_REDISTRIBUTABLE = codes.declare("not_redistributable",
                                    "The export holds text whose licence does not allow redistribution.")
NOTHING_ACCEPTED = codes.declare("nothing_accepted", "The content-error set has no accepted errors yet.")
NOTHING_TO_AGGREGATE = codes.declare("nothing_to_aggregate", "The study has no complete items with a correct answer.")
NOTHING_TO_EXPORT = codes.declare("nothing_to_export", "No task instances match the selection.")
NOTHING_TO_FILTER = codes.declare("nothing_to_filter", "The study has no task instances with a correct answer.")
POS_UNAVAILABLE = codes.declare("pos_unavailable", "The part-of-speech tagger is not available.")
QUESTION_REQUIRED = codes.declare("question_required", "The study has several questions; choose one.")
REBUILD_MISMATCH = codes.declare("rebuild_mismatch",
                                 "Rebuilt rows are missing from the corpora or differ from the exported texts; nothing"
                                 " was written.")
SALT_MISSING = codes.declare("salt_missing", "A salted export job ran before and no longer stores its release "
                                               "salt.")
SCALE_MISMATCH = codes.declare("scale_mismatch", "The question has another scale already.")
SEED_REQUIRED = codes.declare("seed_required", "Balancing removes instances at random and needs a seed.")
STUDY_KIND_MISMATCH = codes.declare("study_kind_mismatch",
                                    "The study holds items of another kind than the scale makes.")
STUDY_NOT_IMPORTED = codes.declare("study_not_imported",
                                   "The study collects annotations on the platform; import into a new slug.")
TOO_MANY_OUTPUTS = codes.declare("too_many_outputs", "The item ranks more outputs than model annotators rank.")
UNKNOWN_CORPUS = codes.declare("unknown_corpus", "A corpus named is not imported here.")
UNKNOWN_METHOD = codes.declare("unknown_method", "A scoring method is not a known one (or cannot be imported).")
UNKNOWN_METRIC = codes.declare("unknown_metric", "A metric is not a known one.")
UNKNOWN_PLOT = codes.declare("unknown_plot", "A dashboard plot is not a known one.")
UNKNOWN_QUESTION = codes.declare("unknown_question", "The study has no question of that name (or none at all).")
UNSUPPORTED_KIND = codes.declare("unsupported_kind", "Model annotators do not answer items of this kind.")
