"""Files the server reads by path on a web user's behalf (score runs' benchmark files, model directories) must lie
inside the configured data folders (settings.STYLECROWD_DATA_DIRS). The refusal reads the same whether the path
exists or not, so the web doors cannot be used to probe the server's file system. The CLI is not limited."""
from __future__ import annotations

from pathlib import Path

from django.conf import settings

from core.error_codes import PATH_NOT_ALLOWED
from core.errors import ApplicationError


def data_dirs() -> list[Path]:
    return [Path(folder).resolve() for folder in settings.STYLECROWD_DATA_DIRS]


def data_path_check(path: str | Path, *, label: str = "file") -> str:
    """The resolved path when it lies inside a data folder; else an error that says nothing about the path."""
    resolved = Path(str(path).strip()).expanduser().resolve()
    if not any(resolved == folder or folder in resolved.parents for folder in data_dirs()):
        raise ApplicationError(
            f"The {label} '{path}' is outside the data folders this server reads from; put it in one of them "
            "(STYLECROWD_DATA_DIRS) or upload it.", code=PATH_NOT_ALLOWED, status=400,
            details={"path": str(path)},
        )
    return str(resolved)
