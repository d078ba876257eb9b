"""Wait until a URL answers (used by `make demo` to wait for its background server). Exit 1 after the timeout."""
import sys
import time
import urllib.request

url, timeout = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
deadline = time.monotonic() + timeout
while time.monotonic() < deadline:
    try:
        urllib.request.urlopen(url, timeout=2).read()
        sys.exit(0)
    except OSError:
        time.sleep(0.2)
sys.exit(f"{url} did not answer within {timeout:.0f} s")
