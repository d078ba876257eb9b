"""django-axes' login attempts in the admin, with an action that works from the admin."""
from axes.admin import AccessAttemptAdmin
from axes.models import AccessAttempt
from django.contrib import admin
from django.utils import timezone

# django-axes' "Clean up expired attempts" reads the attempt time its login handler sets on a request, which an admin
# action's request never has (an AttributeError: a 500): the action again, with that time set and the delete
# permission it needs, since it deletes rows.
admin.site.unregister(AccessAttempt)


@admin.register(AccessAttempt)
class LoginAttemptAdmin(AccessAttemptAdmin):
    actions = ["cleanup_expired_attempts"]

    @admin.action(description="Clean up expired attempts", permissions=["delete"])
    def cleanup_expired_attempts(self, request, queryset):  # noqa: ANN001, ANN201 - axes' signature
        request.axes_attempt_time = timezone.now()
        return super().cleanup_expired_attempts(request, queryset)
