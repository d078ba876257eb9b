"""Model outputs computed once, across runs, processes and machines.

Inside `model_cache_used()` (the scoring services' runs), a model method or metric asks
`cached_outputs(namespace=…, texts=…, compute=…)` for one float32 vector per text: the texts
already in the cache are read from the database, the model runs only on the others (one `compute` call, so the
caller still batches them by length), and what it computed is stored. When every text is cached, `compute` is
never called, so the model is never loaded.

- **Key.** `namespace` names what computed the output: the output kind (`st` embedding, `hf-mean` embedding,
  `logprob` token probabilities, …), its precision and device (float16 on CUDA and float32 on CPU give different
  digits, so they never mix), the runtime when it is not torch (ONNX Runtime's kernels give other last digits)
  and the model directory's content identity (`model_identity`: a SHA-256 over every
  file's relative path and bytes). The text is keyed by its SHA-256. The same model copied to another machine has
  the same identity, so a GPU worker and the CLI share entries through the database.
- **Invalidation.** Any changed byte in the model directory is a new identity, hence a new namespace; the entries of
  the identity a path had before are deleted when the change is first seen. The identity is hashed once per change
  of the files' sizes and modification times (`ModelFingerprint` remembers it per path), not once per run.
- **Bound.** `settings.MODEL_CACHE_MAX_BYTES` (`STYLECROWD_MODEL_CACHE_MB`, 0 switches the cache off): after a
  write that takes the cache past it, the least recently used entries are deleted down to 90 % of it. Reads mark
  entries used at most once an hour, so a warm run writes almost nothing.
"""
from __future__ import annotations

import contextlib
import contextvars
import hashlib
from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max, Sum
from django.utils import timezone

from scoring.models import ModelCacheEntry, ModelFingerprint

CHUNK = 500  # texts per query: under SQLite's limit on bound parameters
USED_RESOLUTION = timedelta(hours=1)


_IN_USE: contextvars.ContextVar[bool] = contextvars.ContextVar("model_cache_in_use", default=False)


@contextlib.contextmanager
def model_cache_used() -> Iterator[None]:
    """Model methods and metrics called inside use the cache: the scoring services' runs (`stel_score`, metric
    evaluations) do; a method or metric called on its own (a benchmark of the model, a unit test) does not."""
    token = _IN_USE.set(True)
    try:
        yield
    finally:
        _IN_USE.reset(token)


def cache_enabled() -> bool:
    """Inside `model_cache_used()`, unless the cache is switched off (`STYLECROWD_MODEL_CACHE_MB=0`)."""
    return _IN_USE.get() and settings.MODEL_CACHE_MAX_BYTES > 0


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _model_files(path: Path) -> list[Path]:
    """The files that make the model: everything under the directory but hidden files and folders (locks, caches)."""
    return sorted(p for p in path.rglob("*") if p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(path).parts))


def model_identity(*, path: Path | str) -> str:
    """The content identity of a model directory (hex SHA-256 of every file's relative path and bytes).

    Hashed again only when a file's size or modification time changed since the last look from this path; when
    the identity changed, the cache entries of the old one are deleted."""
    path = Path(path).resolve()
    files = _model_files(path)
    signature = hashlib.sha256()
    for file in files:
        stat = file.stat()
        signature.update(f"{file.relative_to(path).as_posix()}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    memo = ModelFingerprint.objects.filter(path=str(path)).first()
    if memo is not None and memo.signature == signature.hexdigest():
        return memo.identity
    identity = hashlib.sha256()
    for file in files:
        identity.update(f"{file.relative_to(path).as_posix()}\0{file.stat().st_size}\n".encode())
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                identity.update(block)
    new = identity.hexdigest()
    with transaction.atomic():
        if memo is not None and memo.identity != new:
            ModelCacheEntry.objects.filter(namespace__endswith=f":{memo.identity}").delete()
        ModelFingerprint.objects.update_or_create(path=str(path), defaults={"signature": signature.hexdigest(),
                                                                            "identity": new})
    return new


def cache_namespace(*, kind: str, path: Path | str, precision: str, device: str, runtime: str = "torch") -> str:
    """The namespace of one kind of output of one model directory at one precision on one kind of device, computed
    by one runtime: torch's namespaces are `kind:precision:device:identity`; another runtime's (ONNX Runtime's for
    `st:` models with an ONNX graph) add it before the identity, so the two runtimes' digits never mix."""
    where = device if runtime == "torch" else f"{device}:{runtime}"
    return f"{kind}:{precision}:{where}:{model_identity(path=path)}"


def cache_read(*, namespace: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
    """The cached vectors of these text hashes (those not cached are absent), marked used."""
    found: dict[str, np.ndarray] = {}
    stale: list[str] = []
    recent = timezone.now() - USED_RESOLUTION
    wanted = list(dict.fromkeys(hashes))
    for start in range(0, len(wanted), CHUNK):
        rows = ModelCacheEntry.objects.filter(namespace=namespace, text_hash__in=wanted[start:start + CHUNK])
        for key, vector, used_at in rows.values_list("text_hash", "vector", "used_at"):
            found[key] = np.frombuffer(bytes(vector), dtype="<f4")
            if used_at < recent:
                stale.append(key)
    for start in range(0, len(stale), CHUNK):
        ModelCacheEntry.objects.filter(namespace=namespace, text_hash__in=stale[start:start + CHUNK]).update(
            used_at=timezone.now())
    return found


def cache_write(*, namespace: str, vectors: dict[str, np.ndarray]) -> int:
    """Store vectors by text hash (an entry already there is kept), then keep the cache within its bound."""
    now = timezone.now()
    rows = []
    for key, vector in vectors.items():
        data = np.ascontiguousarray(vector, dtype="<f4").tobytes()
        rows.append(ModelCacheEntry(namespace=namespace, text_hash=key, vector=data, nbytes=len(data), used_at=now))
    ModelCacheEntry.objects.bulk_create(rows, batch_size=CHUNK, ignore_conflicts=True)
    cache_trim()
    return len(rows)


def cache_trim(*, max_bytes: int | None = None) -> int:
    """Delete the least recently used entries while the cache is over its bound (down to 90 % of it)."""
    limit = settings.MODEL_CACHE_MAX_BYTES if max_bytes is None else max_bytes
    total = ModelCacheEntry.objects.aggregate(total=Sum("nbytes"))["total"] or 0
    if total <= limit:
        return 0
    excess, doomed = total - int(limit * 0.9), []
    for pk, nbytes in ModelCacheEntry.objects.order_by("used_at", "pk").values_list("pk", "nbytes").iterator():
        if excess <= 0:
            break
        doomed.append(pk)
        excess -= nbytes
    for start in range(0, len(doomed), CHUNK):
        ModelCacheEntry.objects.filter(pk__in=doomed[start:start + CHUNK]).delete()
    return len(doomed)


def cache_clear(*, identity: str | None = None) -> int:
    """Delete every entry, or those of one model identity."""
    entries = ModelCacheEntry.objects.all()
    if identity:
        entries = entries.filter(namespace__endswith=f":{identity}")
    return entries.delete()[0]


def cached_outputs(*, namespace: str | None, texts: Sequence[str],
                   compute: Callable[[list[str]], Sequence[np.ndarray]]) -> tuple[list[np.ndarray], int]:
    """One float32 vector per text, and how many of the distinct texts were computed (not found in the cache).

    `texts` should be distinct; `compute` gets the texts the cache lacks, in their order, and returns one vector
    each (it is not called when nothing is missing). `namespace` None: no cache, everything is computed."""
    if namespace is None or not cache_enabled():
        return [np.asarray(v, dtype=np.float32) for v in compute(list(texts))] if texts else [], len(texts)
    hashes = [text_hash(t) for t in texts]
    found = cache_read(namespace=namespace, hashes=hashes)
    missing = [n for n, key in enumerate(hashes) if key not in found]
    if missing:
        computed = compute([texts[n] for n in missing])
        fresh = {hashes[n]: np.asarray(vector, dtype=np.float32) for n, vector in zip(missing, computed, strict=True)}
        cache_write(namespace=namespace, vectors=fresh)
        found.update(fresh)
    return [found[key] for key in hashes], len(missing)


def cache_summary() -> dict[str, object]:
    """Entries and bytes per namespace, and the bound: what `manage.py model_cache` prints."""

    rows = (ModelCacheEntry.objects.values("namespace")
            .annotate(entries=Count("id"), bytes=Sum("nbytes"), last_used=Max("used_at")).order_by("namespace"))
    namespaces = [{**row, "last_used": row["last_used"].isoformat() if row["last_used"] else None} for row in rows]
    return {"entries": sum(r["entries"] for r in namespaces), "bytes": sum(r["bytes"] or 0 for r in namespaces),
            "max_bytes": settings.MODEL_CACHE_MAX_BYTES, "namespaces": namespaces,
            "models": list(ModelFingerprint.objects.values("path", "identity").order_by("path"))}
