"""Block lists follow StyleCrowd's blocks: blocking or unblocking a worker (annotation's WorkerBlock) queues a sync of
every account of that platform whose block list exists, once the change is committed."""
from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from annotation.models import WorkerBlock
from core.jobs import registered_task
from platforms.models import PlatformAccount


@receiver([post_save, post_delete], sender=WorkerBlock, dispatch_uid="platforms_block_list_follow")
def block_list_follow(sender: Any, instance: WorkerBlock, **kwargs: Any) -> None:
    sync = registered_task("platforms.block_list_sync")
    for account_id in PlatformAccount.objects.filter(platform=instance.platform).exclude(
            block_list_id="").values_list("pk", flat=True):
        transaction.on_commit(lambda pk=account_id: sync.delay(pk), robust=True)
