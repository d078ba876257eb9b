"""Every write of the annotation app, one module per concern (import the submodule you need):

- `studies`: study_create, question presets, item files;
- `sessions`: session_create/consent/eligibility/start/next, answer_submit, participant_exclude;
- `engine`: batch_reserve (serving order: `fill`, then a random key), reservations_release(_expired), adaptive
  closing;
- `hot_path`: `next` and `answers` as one prepared PostgreSQL statement each (the general path is in `sessions`);
- `exports`: responses_export;
- `display`: what a participant is shown, and mapping displayed answers back to canonical ones.
"""
