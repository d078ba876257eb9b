"""Every write of the annotation app, one module per concern (import the submodule you need). Tests mirror the
riskiest ones in tests/annotation/services/ (sessions, answers, engine, participation, review); a module past about
300 lines becomes a package, as `writing_signals` is, split where it already has a section marker.

Studies
- `study_build`: the one service every door calls to create a study of any kind (ordering, Likert, ranking,
  rewrite), with its sampling plan and practice items;
- `study_settings`: every study setting declared once (type, default, bounds, label, CLI flag), the doors derived
  from it;
- `studies`: study_create (and study_codes: independent random codes), question presets, item files;
- `study_setup`: a study before its first participant: preview, the links for the crowd platform, opening it;
- `descriptions`: the task description of an ordering study, composed from its components and setup;
- `screening`: which screening questions a study draws (its components, fair in its setup), screening_require;
- `sampling_plan`: how many instances of each component to annotate to reach a target of validated ones;
- `rating_presets`: GYAFC's and Pauli et al.'s rating scales, Likert and ranking items from system outputs;

Participants
- `participation`: who may take part (a link's platform parameters), room per arrival, ownership of a session;
- `session_lookup`: session_load (expiring an overdue batch on the way), the locked read, the session errors;
- `session_creation`: session_create (a participant's arrival: a new batch, or the one resumed);
- `sessions`: session_consent (and decline)/eligibility/start/next;
- `consent`: the "What we record" statement generated from a study's settings, the special-category rule, consent
  versions (consent_version_resolve);
- `answers`: answer_submit, participant_exclude;
- `answer_checks`: validate_answer, what an answer must be on both serving paths;
- `engine`: batch_reserve (serving order: `fill`, then a random key), reservations_release(_expired);
- `adaptive`: adaptive closing (the m-of-k rule of tasks.stel.majority, a guide's agreement), what it saved;
- `hot_path`: `next` and `answers` as one prepared PostgreSQL statement each (the general path is in `sessions`);
- `display`: what a participant is shown (the answer vocabulary and its swap: `annotation/models/studies.py`);
- `practice`: practice items with feedback before the first batch;
- `departures`: a participant who left on the platform (returned, timed out): their slots go back at once;
- `guidance`: a model's answers as the guide of adaptive stopping (set by scoring, which annotation never imports);

Rewrites
- `rewrites`: rewrite studies (sources, filters, copy detection, persona questions);
- `review`: accepting and rejecting rewrites, blocking workers, the automatic review (`reviews_decide_pending`);
- `rewrite_corpus`: the accepted rewrites as a parallel corpus with seeded splits;
- `telemetry`: writing telemetry of free-text answers (counts and durations, never the keys typed);
- `writing_signals/`: is the crowd's writing human? measures, thresholds, their job;

Out
- `exports`: responses_export, decisions_export (approve / reject / return CSVs for Prolific and MTurk);
- `data_plan`: a data-management-plan section (Markdown) from a study's facts (`manage.py data_plan`).
"""
