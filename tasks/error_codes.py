"""Error codes the tasks app raises (corpora, imports, instances); codes it shares with apps above it too.

A code shared with a lower app is declared there (see core/error_codes.py) and imported from it.
"""
from core.error_codes import ErrorCodes

codes = ErrorCodes(__name__)

ALIGNED_FILES_BY_ROLE = codes.declare("aligned_files_by_role",
                                      "An aligned upload must send the style-1 and style-2 files in their own fields.")
CANNOT_WRITE = codes.declare("cannot_write", "An output file cannot be written.")
COMPONENT_EXISTS = codes.declare("component_exists", "A style component of that name exists already.")
COMPONENT_MISMATCH = codes.declare("component_mismatch",
                                   "A row's style type differs from the component it is imported into.")
CONFLICT = codes.declare("conflict",
                         "The record changed under the request (taken, decided or created by someone else); nothing "
                         "was done.")
CORPUS_EXISTS = codes.declare("corpus_exists", "A corpus of that name exists already and replace was not asked for.")
DUPLICATE_ID = codes.declare("duplicate_id", "An input file repeats an id.")
EMPTY_FILE = codes.declare("empty_file", "An input file holds no rows to import.")
EMPTY_ID = codes.declare("empty_id", "An input row has an empty id.")
EMPTY_TEXT = codes.declare("empty_text", "An input row has an empty text.")
FILE_NOT_FOUND = codes.declare("file_not_found", "An input file does not exist.")
INSTANCES_EXIST = codes.declare("instances_exist",
                                "The corpus has instances of that setup already and replace was not asked for.")
INSTANCES_IN_USE = codes.declare("instances_in_use",
                                 "The corpus's instances are used in a study and cannot be replaced.")
INVALID_COMPONENT = codes.declare("invalid_component", "A style component's name or labels are not valid.")
INVALID_COUNT = codes.declare("invalid_count", "The number of instances asked for is out of range for the corpus.")
INVALID_ENCODING = codes.declare("invalid_encoding", "An input file is not valid UTF-8.")
LINE_TOO_LONG = codes.declare("line_too_long", "A line of an input file is longer than one line may be "
                              "(STYLECROWD_MAX_LINE_BYTES).")
INVALID_JSON = codes.declare("invalid_json", "A JSONL line is not a JSON object.")
INVALID_LANGUAGE = codes.declare("invalid_language", "The language is not a BCP-47 tag.")
INVALID_NAME = codes.declare("invalid_name", "A name (corpus, export) is empty or has characters it may not have.")
INVALID_STATUS = codes.declare("invalid_status", "A status filter is not one of the allowed values.")
INVALID_VALUE = codes.declare("invalid_value", "A setting's value is out of its allowed range.")
LEAK_DETECTED = codes.declare("leak_detected",
                              "The instance audit found answers that leak from the texts (audit_instances).")
MALFORMED_ROW = codes.declare("malformed_row", "A CSV/TSV row has another number of fields than the header.")
MISSING_COLUMNS = codes.declare("missing_columns", "An input file lacks required columns.")
MISSING_COMPONENT = codes.declare("missing_component", "The import format needs a style component and none was given.")
MIXED_COMPONENTS = codes.declare("mixed_components",
                                 "The input files mix style types; each style type is its own corpus.")
NO_FILES = codes.declare("no_files", "No input files were given.")
NO_INSTANCES = codes.declare("no_instances", "The corpus has no instances to audit.")
NOT_A_FILE = codes.declare("not_a_file", "An input path is a directory, not a file.")
NOTHING_TO_STORE = codes.declare("nothing_to_store", "Nothing could be converted or accepted, so nothing was stored.")
NUL_IN_TEXT = codes.declare("nul_in_text", "An input file holds a NUL character, which no stored text may hold.")
PATH_TOO_LONG = codes.declare("path_too_long", "A stored file path is longer than the database allows.")
TOO_FEW_PAIRS = codes.declare("too_few_pairs",
                              "The corpus has too few pairs (or quadruples) to generate instances from.")
UNCHANGED = codes.declare("unchanged", "Translated candidates equal their text.")
UNEQUAL_LINE_COUNTS = codes.declare("unequal_line_counts", "Aligned files have different line counts.")
UNKNOWN_COMPONENT = codes.declare("unknown_component", "No style component of that name (in the corpus or the study).")
UNKNOWN_FILE_TYPE = codes.declare("unknown_file_type", "An input file's type (suffix) is not one the importer reads.")
UNKNOWN_FORMAT = codes.declare("unknown_format", "The import format is not a known one.")
UNKNOWN_LICENCE = codes.declare("unknown_licence", "The licence is not a known SPDX identifier.")
UNKNOWN_NORMALIZER = codes.declare("unknown_normalizer", "The text normalizer is not a known one.")
UNKNOWN_SETUP = codes.declare("unknown_setup", "The instance setup is not quadruple, triple or style-or-content.")
UNTRANSLATED = codes.declare("untranslated", "Candidates have no translation.")
UPLOAD_TOO_LARGE = codes.declare("upload_too_large", "The uploaded files are larger than one import takes.")
WRONG_FILE_COUNT = codes.declare("wrong_file_count", "The aligned format needs exactly two files.")
WRONG_FILE_FIELD = codes.declare("wrong_file_field", "Only the aligned format uses the style-1/style-2 file fields.")
