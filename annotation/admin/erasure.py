"""The admin's door to erasure on request: "Find a participant by id" (platform + id) → the dry run, table by table,
as the confirmation page → "Erase this person's data" (a POST) runs the same service as `manage.py
erase_participant` and the API (core/erasure.py) and shows what went.

Both steps need the personal-data permission and the right to delete participants (`may_erase`), on GET and POST.
The raw id is typed in and shown back on these pages only: nothing here stores it (no admin LogEntry, no message in
the session, the access log names the person key), so after the erasure it is nowhere."""
from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from annotation.api.erasure import may_erase
from core.admin.site import admin_page_register
from core.erasure import ERASABLE_PLATFORMS, participant_erase
from core.errors import ApplicationError
from core.personal_data import personal_data_access_log


class ParticipantFindForm(forms.Form):
    platform = forms.ChoiceField(choices=[(p, p) for p in ERASABLE_PLATFORMS],
                                 help_text="A platform's participant is erased with every imported annotator stored "
                                           "under the same id (ratings imported from a file); \"imported\" erases only "
                                           "imported annotators.")
    external_id = forms.CharField(label="Id", max_length=128,
                                  help_text="The participant's platform id (PROLIFIC_PID, WorkerId, or the id an "
                                            "anonymous participant was given), or an imported annotator's id.")
    reason = forms.CharField(max_length=300, required=False, help_text="Optional: kept on the erasure's record.")


def participant_erase_view(admin: Any, request: HttpRequest) -> HttpResponse:
    """GET: the find form; POST without `confirm`: the dry run; POST with `confirm`: the erasure."""
    if not may_erase(request.user):
        raise PermissionDenied
    form = ParticipantFindForm(request.POST or None)
    context: dict[str, Any] = {**admin.admin_site.each_context(request), "opts": admin.model._meta,
                               "title": "Find a participant by id", "form": form}
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        apply = request.POST.get("confirm") == "erase"
        try:
            summary = participant_erase(platform=data["platform"], external_id=data["external_id"], apply=apply,
                                        requested_by=request.user.get_username(), reason=data["reason"])
        except ApplicationError as exc:
            context["error"] = exc.message
        else:
            personal_data_access_log(user=request.user, door="admin",
                                     what=f"erasure {'applied' if apply else 'dry run'}: {summary['person_key']}",
                                     people=1)
            rows = [(table, n) for table, n in summary["tables"].items()]
            rows += [(f"{table} (id replaced in text)", n) for table, n in summary["mentions_replaced"].items()]
            if summary["media_files"]:
                rows.append(("files under the media folder", summary["media_files"]))
            context.update({"summary": summary, "rows": rows, "applied": apply,
                            "title": "Erased: this person's data" if apply else "Erase this person's data?"})
            if apply:
                context["form"] = ParticipantFindForm()  # the page shown after the erasure keeps no raw id
    return TemplateResponse(request, "admin/annotation/participant/erase.html", context)


admin_page_register(app_label="annotation", name="Find a participant by id (erasure on request)",
                    url_name="admin:annotation_participant_erase", allowed=may_erase)
