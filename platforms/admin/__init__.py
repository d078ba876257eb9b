"""The platforms app in the admin: accounts (tokens write-only), each study's platform page with its buttons and
confirmation pages, the bonus ledger with totals and reconciliation, and read-only records of what was sent."""
from platforms.admin import accounts, ledger, overview, studies  # noqa: F401
