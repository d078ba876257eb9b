"""Services of the platforms app (every write): accounts, publish, sync, decisions, bonuses, messages, lists,
webhooks, jobs."""
