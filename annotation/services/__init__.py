"""Every write of the annotation app, one module per concern (import the submodule you need):

- `studies`: study_create (and study_codes: independent random codes), question presets, item files;
- `descriptions`: the task description of an ordering study, composed from its components and setup;
- `screening`: which screening questions a study draws (its components, fair in its setup), screening_require;
- `sessions`: session_create/consent (and decline)/eligibility/start/next, answer_submit, participant_exclude;
- `engine`: batch_reserve (serving order: `fill`, then a random key), reservations_release(_expired), adaptive
  closing;
- `hot_path`: `next` and `answers` as one prepared PostgreSQL statement each (the general path is in `sessions`);
- `exports`: responses_export, decisions_export (approve / reject / return CSVs for Prolific and MTurk);
- `display`: what a participant is shown, and mapping displayed answers back to canonical ones.
"""
