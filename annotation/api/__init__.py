"""The annotation app's JSON API, one module per concern: participant sessions (sessions), researcher studies
(studies), practice items, rewrite review, writing signals; `urls` holds the URL patterns (config/urls.py mounts
them at /api/v1/)."""
