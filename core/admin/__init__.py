"""Core's admin: background jobs, login attempts and personal data (the access log, and the mixin of every admin
that shows a person's data) (one module each), and the site itself (site.py, installed
through core.apps.StyleCrowdAdminConfig). Other apps' admins import the job helpers from here, the index of what
core's admin offers them."""
from core.admin import login_attempts  # noqa: F401 - registers django-axes' attempts with a working action
from core.admin.jobs import (
    JOB_LINKS,
    JOB_NEXT_STEPS,
    JOB_PANELS,
    JobAdmin,
    job_kind_label,
    job_link_register,
    job_message,
    job_next_step_register,
    job_panel_register,
    job_values_html,
    job_waiting_html,
)
from core.admin.personal_data import PersonalDataAccessAdmin, PersonalDataAdminMixin

__all__ = ["JOB_LINKS", "JOB_NEXT_STEPS", "JOB_PANELS", "JobAdmin", "PersonalDataAccessAdmin", "PersonalDataAdminMixin",
           "job_kind_label", "job_link_register", "job_message",
           "job_next_step_register", "job_panel_register", "job_values_html", "job_waiting_html"]
