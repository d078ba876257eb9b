"""Error codes the platforms app raises (crowd-platform accounts, publishing, decisions, bonuses).

A code shared with a lower app is declared there (see core/error_codes.py) and imported from it.
"""
from core.error_codes import ErrorCodes

codes = ErrorCodes(__name__)

ACCOUNT_FIXED = codes.declare("account_fixed", "The study runs on another platform account already and cannot move.")
BASE_URL_MISSING = codes.declare("base_url_missing",
                                 "The server's public address (STYLECROWD_PUBLIC_URL) is needed for the platform's "
                                 "link.")
BONUS_CAP_EXCEEDED = codes.declare("bonus_cap_exceeded", "The bonuses would pass the cap per participant or per study.")
BUSY = codes.declare("busy", "Another run is creating or publishing the platform study.")
CONFIRMATION_REQUIRED = codes.declare("confirmation_required",
                                      "Rejections would be sent, and they need an explicit confirmation.")
DRAFT_EXISTS = codes.declare("draft_exists", "The draft exists on the platform; change it there, not here.")
EMPTY_ALLOW_LIST = codes.declare("empty_allow_list", "The allow list holds nobody, so nobody could take part.")
ENCRYPTION_KEY_INVALID = codes.declare("encryption_key_invalid", "STYLECROWD_ENCRYPTION_KEY is not a valid Fernet key.")
ENCRYPTION_KEY_MISSING = codes.declare("encryption_key_missing",
                                       "Storing a platform secret needs STYLECROWD_ENCRYPTION_KEY.")
EXISTS = codes.declare("exists", "A platform account of that name exists already.")
HTTPS_REQUIRED = codes.declare("https_required", "MTurk shows an ExternalQuestion only from an https:// address.")
INVALID_TOKEN_ENV = codes.declare("invalid_token_env",
                                  "A token variable must be an upper-case name containing PROLIFIC.")
MESSAGE_TOO_LONG = codes.declare("message_too_long", "The rejection message is longer than the platform takes.")
MESSAGE_TOO_SHORT = codes.declare("message_too_short", "The rejection message is too short to explain the rejection.")
NO_ACCOUNT = codes.declare("no_account", "The study has no platform account.")
NO_DRAFT = codes.declare("no_draft", "There is no platform draft to publish.")
NO_TEST_RUN = codes.declare("no_test_run", "The platform has no test participants (MTurk: use a sandbox account; "
                                           "the mock: open its link).")
NO_RECIPIENTS = codes.declare("no_recipients", "The study has no participants on the platform yet (sync first).")
NOT_ON_PLATFORM = codes.declare("not_on_platform", "The study is not on a crowd platform yet.")
NOT_PUBLISHED = codes.declare("not_published", "The study has no study on the platform yet (publish it first).")
PLATFORM_BAD_LINK = codes.declare("platform_bad_link",
                                  "A platform link points away from its API; the token is not sent there.")
PLATFORM_BAD_PAGINATION = codes.declare("platform_bad_pagination", "The platform's pagination repeats a page.")
PLATFORM_ERROR = codes.declare("platform_error",
                               "A crowd platform call failed (the fallback code of a platform client error).")
PLATFORM_FORBIDDEN = codes.declare("platform_forbidden",
                                   "The platform refused the call (403: the token's user may not do this).")
PLATFORM_NO_ANSWER = codes.declare("platform_no_answer",
                                   "The platform did not answer; the request may have been carried out (a person "
                                   "checks).")
PLATFORM_NOT_FOUND = codes.declare("platform_not_found", "The platform does not know the resource (404).")
PLATFORM_RATE_LIMITED = codes.declare("platform_rate_limited", "The platform is rate-limiting; nothing was done.")
PLATFORM_REFUSED = codes.declare("platform_refused", "The platform refused the request.")
PLATFORM_SERVER_ERROR = codes.declare("platform_server_error",
                                      "The platform answered 5xx; the request may or may not have been carried out.")
PLATFORM_UNAUTHORIZED = codes.declare("platform_unauthorized",
                                      "The platform refused the credentials, or there are none.")
PLATFORM_UNREACHABLE = codes.declare("platform_unreachable", "The platform could not be reached; nothing was sent.")
REWARD_BELOW_MINIMUM = codes.declare("reward_below_minimum",
                                     "The reward is below the platform's minimum pay (or is nothing).")
SECRET_UNDECRYPTABLE = codes.declare("secret_undecryptable",
                                     "A stored platform secret cannot be decrypted with the current key.")
STUDY_NOT_OPEN = codes.declare("study_not_open",
                               "The study must be active before participants arrive from the platform.")
TOKEN_MISSING = codes.declare("token_missing", "The platform account has no token.")
UNKNOWN_OUTCOME = codes.declare("unknown_outcome",
                                "Bonus rows have an unknown outcome that a person must resolve first.")
WEBHOOK_REFUSED = codes.declare("webhook_refused", "A platform webhook call failed its signature or secret check.")
WORKSPACE_MISSING = codes.declare("workspace_missing", "The token's user has several workspaces; say which one to use.")
