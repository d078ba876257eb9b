"""A local stand-in for the Hugging Face hub's HTTP API, as much of it as `HfApi.create_repo` and `upload_folder`
use: repository creation, preupload (regular or LFS per file), the LFS batch API with its upload URLs, and the
NDJSON commit. It checks the bearer token, keeps what arrives, and can be told to answer 429, 5xx or nothing."""
from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _HubHandler(BaseHTTPRequestHandler):
    """One small handler per route of the hub; `hub` is the FakeHub that keeps what arrives (set per server)."""

    hub: FakeHub

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: Any = None) -> None:
        data = json.dumps(body if body is not None else {}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status == 429:
            self.send_header("Retry-After", "1")
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _authorized(self) -> bool:
        if self.headers.get("Authorization") != f"Bearer {self.hub.token}":
            self._send(401, {"error": "Invalid credentials in Authorization header"})
            return False
        return True

    def _failing(self, step: str) -> bool:
        mode = self.hub.fail.get(step)
        if mode == "hang":
            time.sleep(self.hub.hang_seconds)
            return True
        if isinstance(mode, int):
            self._send(mode, {"error": f"{step} failed"})
            return True
        return False

    def do_POST(self) -> None:  # noqa: N802
        self.hub.requests.append(("POST", self.path))
        body = self._body()
        if not self._authorized():
            return
        for pattern, handler in self.POST_ROUTES:
            match = re.match(pattern, self.path)
            if match:
                handler(self, body, *match.groups())
                return
        self._send(404, {"error": f"no route {self.path}"})

    def _validate_yaml(self, body: bytes) -> None:
        errors = self.hub.validate_yaml(json.loads(body)["content"])
        self._send(400 if errors else 200, {"errors": [{"message": e} for e in errors], "warnings": []})

    def _create_repo(self, body: bytes) -> None:
        if self._failing("create"):
            return
        spec = json.loads(body)
        repo = f"{spec['organization']}/{spec['name']}" if spec.get("organization") else spec["name"]
        if repo in self.hub.repos:
            self._send(409, {"error": "You already created this dataset repo", "url": repo})
            return
        self.hub.repos[repo] = spec
        self.hub.files[repo] = {}
        self._send(200, {"url": f"http://{self.headers['Host']}/datasets/{repo}", "name": repo})

    def _repo_step(self, body: bytes, repo: str, step: str) -> None:
        if self._failing(step):
            return
        if step == "commit":
            self._commit(repo, body)
            return
        files = json.loads(body)["files"]
        self._send(200, {"files": [
            {"path": f["path"], "uploadMode": "lfs" if f["path"].endswith(".parquet") else "regular",
             "shouldIgnore": False} for f in files]})

    def _lfs_batch(self, body: bytes, repo: str) -> None:
        objects = json.loads(body)["objects"]
        host = self.headers["Host"]
        self._send(200, {"transfer": "basic", "objects": [
            {"oid": o["oid"], "size": o["size"],
             "actions": {"upload": {"href": f"http://{host}/lfs-upload/{o['oid']}"}}} for o in objects]})

    POST_ROUTES: tuple[tuple[str, Any], ...] = (
        (r"^/api/validate-yaml$", _validate_yaml),
        (r"^/api/repos/create$", _create_repo),
        (r"^/api/datasets/(.+)/(preupload|commit)/main(?:\?.*)?$", _repo_step),
        (r"^/datasets/(.+)\.git/info/lfs/objects/batch$", _lfs_batch),
    )

    def do_PUT(self) -> None:  # noqa: N802
        self.hub.requests.append(("PUT", self.path))
        match = re.match(r"^/lfs-upload/([0-9a-f]{64})$", self.path)
        data = self._body()
        if not match or hashlib.sha256(data).hexdigest() != match.group(1):
            self._send(400, {"error": "bad LFS upload"})
            return
        self.hub.lfs[match.group(1)] = data
        self._send(200, {})

    def _commit(self, repo: str, body: bytes) -> None:
        header, added = {}, {}
        for line in body.decode().splitlines():
            entry = json.loads(line)
            if entry["key"] == "header":
                header = entry["value"]
            elif entry["key"] == "file":
                added[entry["value"]["path"]] = base64.b64decode(entry["value"]["content"])
            elif entry["key"] == "lfsFile":
                oid = entry["value"]["oid"]
                if oid not in self.hub.lfs:
                    self._send(422, {"error": f"LFS object {oid} was never uploaded"})
                    return
                added[entry["value"]["path"]] = self.hub.lfs[oid]
        self.hub.files.setdefault(repo, {}).update(added)
        oid = hashlib.sha1(json.dumps(sorted(added)).encode()).hexdigest()
        self.hub.commits.append({"repo": repo, "summary": header.get("summary"), "files": sorted(added)})
        self._send(200, {"commitUrl": f"http://{self.headers['Host']}/datasets/{repo}/commit/{oid}",
                         "commitOid": oid, "pullRequestUrl": None})


class FakeHub:
    def __init__(self, token: str = "hf_test_token") -> None:
        self.token = token
        self.repos: dict[str, dict[str, Any]] = {}
        self.files: dict[str, dict[str, bytes]] = {}  # repo → path → bytes (after the commit)
        self.lfs: dict[str, bytes] = {}  # oid → bytes (uploaded, not yet committed)
        self.commits: list[dict[str, Any]] = []
        self.requests: list[tuple[str, str]] = []
        self.fail: dict[str, int | str] = {}  # "create" / "preupload" / "commit" → HTTP status or "hang"
        self.hang_seconds = 5.0
        self.validated: list[str] = []
        handler = type("Handler", (_HubHandler,), {"hub": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # The hub's licence identifiers (huggingface.co/docs/hub/repositories-licenses), those StyleCrowd can write.
    HUB_LICENCES = {"mit", "apache-2.0", "bsd-2-clause", "bsd-3-clause", "gpl-3.0", "lgpl-3.0", "agpl-3.0",
                    "cc0-1.0", "cc-by-4.0", "cc-by-sa-4.0", "cc-by-nc-4.0", "cc-by-nc-sa-4.0", "cc-by-3.0",
                    "cc-by-sa-3.0", "odc-by", "odbl", "pddl", "other", "unknown"}

    def validate_yaml(self, content: str) -> list[str]:
        """What the hub checks of a dataset card's metadata (the part StyleCrowd writes)."""
        import yaml

        self.validated.append(content)
        if not content.startswith("---\n"):
            return ["README.md has no YAML metadata"]
        meta = yaml.safe_load(content.split("---\n")[1])
        licences = meta.get("license")
        licences = licences if isinstance(licences, list) else [licences]
        errors = [f'"license" {value!r} is not a hub licence' for value in licences if value not in self.HUB_LICENCES]
        if "other" in licences and not meta.get("license_name"):
            errors.append('"license: other" needs "license_name"')
        for config in meta.get("configs", []):
            if not config.get("config_name") or not all(f.get("split") and f.get("path")
                                                        for f in config.get("data_files", [])):
                errors.append(f"config {config!r} needs config_name and data_files with split and path")
        return errors

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
