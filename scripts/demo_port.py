"""The port `make demo` serves on: $PORT when it is set (refused, naming it, when something already listens there),
else the default (8000) when it is free, else a free port the system picks; the choice is said on stderr, the port
printed on stdout. Usage: demo_port.py [DEFAULT]."""
import os
import socket
import sys


def free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def any_free() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


default = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
asked = os.environ.get("PORT", "").strip()
if asked:
    if not asked.isdigit() or not 0 < int(asked) < 65536:
        sys.exit(f"PORT={asked!r} is not a port number (1-65535).")
    if not free(int(asked)):
        sys.exit(f"PORT={asked}: something already listens on 127.0.0.1:{asked}; choose another PORT, or leave PORT "
                 "unset to get a free one.")
    print(asked)
elif free(default):
    print(default)
else:
    port = any_free()
    print(f"Port {default} is taken: serving on {port} instead (set PORT to choose).", file=sys.stderr)
    print(port)
