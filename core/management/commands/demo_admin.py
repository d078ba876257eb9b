import os
from typing import Any

from django.contrib.auth import get_user_model

from core.commands import JsonCommand


class Command(JsonCommand):
    help = "Create (or reset) the demo's admin user and print its credentials. For the local demo only."

    def run(self, **options: Any) -> dict[str, Any]:
        username = os.environ.get("STYLECROWD_DEMO_USER", "admin")
        password = os.environ.get("STYLECROWD_DEMO_PASSWORD", "stylecrowd-demo")
        user, created = get_user_model().objects.get_or_create(username=username, defaults={"email": ""})
        user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
        self.stderr.write(f"Admin user: {username}  password: {password}  → http://127.0.0.1:8000/admin/")
        return {"username": username, "password": password, "created": created,
                "admin_url": "http://127.0.0.1:8000/admin/"}
