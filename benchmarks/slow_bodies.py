"""Slow request bodies against gunicorn alone and behind nginx (deploy/nginx/): does `/api/v1/ping/` stay fast?

N clients from one address each open a POST with a large Content-Length and send its body one byte every half
second (a slow upload, or an attacker doing it on purpose); meanwhile a prober asks `/api/v1/ping/` every half
second (5 s timeout). Straight at gunicorn (gthread), each slow body holds a thread until it ends; through nginx with
deploy/nginx/stylecrowd-proxy.conf, nginx buffers the bodies and gunicorn never sees them. Traffic stays on
127.0.0.1, bounded in count and time.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sc_slow_bench .venv/bin/python benchmarks/slow_bodies.py \
        --slow 40 --seconds 20 --workers 3 --threads 8

tests/test_deploy_nginx.py uses the same parts (`nginx_proxy`, `slow_bodies_measure`).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parent.parent
PROXY_CONF = ROOT / "deploy" / "nginx" / "stylecrowd-proxy.conf"
STATIC_PLACEHOLDER = "/srv/stylecrowd/staticfiles/"
NGINX_MAIN = """
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/error.log warn;
{user}
events {{ worker_connections 1024; }}
http {{
    access_log off;
    include /etc/nginx/mime.types;
    client_body_temp_path {work}/body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
    upstream stylecrowd {{ server 127.0.0.1:{upstream}; keepalive 16; }}
    server {{
        listen 127.0.0.1:{port};
        include {work}/stylecrowd-proxy.conf;
    }}
}}
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def nginx_binary() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if not found:
        raise RuntimeError("nginx is not installed: `make nginx` (Debian's nginx-light)")
    return found


@contextmanager
def nginx_proxy(*, upstream_port: int, work: Path, static_root: Path) -> Iterator[str]:
    """nginx on a free port of 127.0.0.1 with the repository's proxy configuration in front of `upstream_port`;
    yields its base URL."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "stylecrowd-proxy.conf").write_text(
        PROXY_CONF.read_text().replace(STATIC_PLACEHOLDER, f"{static_root.resolve()}/"))
    port = free_port()
    user = "user root;" if os.geteuid() == 0 else ""  # as root, workers would become nobody: the folders are ours
    (work / "nginx.conf").write_text(NGINX_MAIN.format(work=work, upstream=upstream_port, port=port, user=user))
    binary = nginx_binary()
    test = subprocess.run([binary, "-t", "-p", str(work), "-c", str(work / "nginx.conf")], capture_output=True,
                          text=True)
    if test.returncode:
        raise RuntimeError(f"nginx refused the configuration:\n{test.stderr}")
    server = subprocess.Popen([binary, "-p", str(work), "-c", str(work / "nginx.conf"), "-g", "daemon off;"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"nginx did not start: {(work / 'error.log').read_text()}") from None
                time.sleep(0.1)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=20)


def _slow_upload(port: int, path: str, stop: threading.Event, sent: list[int]) -> None:
    """One POST whose body (declared 100,000 bytes) arrives one byte every half second until `stop`."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall((f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-"
                          "urlencoded\r\nContent-Length: 100000\r\n\r\n").encode())
            while not stop.wait(0.5):
                sock.sendall(b"a")
                sent.append(1)
    except OSError:
        pass  # the server gave up on it (a timeout): that is allowed


def _probe(base: str, stop: threading.Event, timeout: float) -> list[float | None]:
    """`/api/v1/ping/` every half second: seconds each took, None for a timeout or an error."""
    times: list[float | None] = []
    while not stop.is_set():
        started = time.monotonic()
        try:
            ok = requests.get(f"{base}/api/v1/ping/", timeout=timeout).status_code == 200
        except requests.RequestException:
            ok = False
        times.append(time.monotonic() - started if ok else None)
        stop.wait(max(0.0, 0.5 - (time.monotonic() - started)))
    return times


def slow_bodies_measure(*, base: str, slow: int, seconds: float, path: str = "/admin/login/",
                        timeout: float = 5.0) -> dict[str, Any]:
    """`slow` slow uploads to `base` for `seconds` while the prober pings it; the pings' figures."""
    port = int(base.rsplit(":", 1)[1])
    stop = threading.Event()
    sent: list[int] = []
    uploads = [threading.Thread(target=_slow_upload, args=(port, path, stop, sent), daemon=True)
               for _ in range(slow)]
    for thread in uploads:
        thread.start()
    time.sleep(1.0)  # every slow upload has sent its headers
    result: dict[str, list[float | None]] = {}
    prober = threading.Thread(target=lambda: result.setdefault("times", _probe(base, stop, timeout)))
    prober.start()
    time.sleep(seconds)
    stop.set()
    prober.join(timeout=timeout + 5)
    for thread in uploads:
        thread.join(timeout=5)
    times = result.get("times", [])
    answered = sorted(t for t in times if t is not None)
    return {"slow_uploads": slow, "seconds": seconds, "pings": len(times), "ping_timeouts": times.count(None),
            "ping_median_ms": round(statistics.median(answered) * 1000, 1) if answered else None,
            "ping_max_ms": round(answered[-1] * 1000, 1) if answered else None, "body_bytes_trickled": len(sent)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slow", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--work", default="benchmarks/out/slow_bodies")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sc_slow_bench")
    name = os.environ["DATABASE_URL"].rsplit("/", 1)[-1]
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", name], capture_output=True)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, check=True, capture_output=True)
    port = free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "config.wsgi:application", "--workers", str(args.workers),
         "--worker-class", "gthread", "--threads", str(args.threads), "--bind", f"127.0.0.1:{port}",
         "--log-level", "error"], cwd=ROOT, env={**os.environ, "DJANGO_LOG_LEVEL": "ERROR"},
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    direct = f"http://127.0.0.1:{port}"
    work = (ROOT / args.work).resolve()
    try:
        subprocess.run([sys.executable, "scripts/wait_for_url.py", f"{direct}/api/v1/ping/", "60"], cwd=ROOT,
                       check=True)
        out: dict[str, Any] = {"gunicorn": f"-w {args.workers} --threads {args.threads}",
                               "direct": slow_bodies_measure(base=direct, slow=args.slow, seconds=args.seconds)}
        time.sleep(3)  # the direct run's slow bodies are gone
        with nginx_proxy(upstream_port=port, work=work, static_root=work / "static") as proxied:
            out["through_nginx"] = slow_bodies_measure(base=proxied, slow=args.slow, seconds=args.seconds)
    finally:
        server.terminate()
        server.wait(timeout=30)
    out["loadavg"] = Path("/proc/loadavg").read_text().strip()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
