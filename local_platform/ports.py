"""Loopback ports for the local servers the demo and the tests start."""

from __future__ import annotations

import random
import socket
from pathlib import Path

#: the lowest port handed out: above the well-known and most registered services' ports
LOWEST = 20000
_handed_out: set[int] = set()


def _ephemeral_start() -> int:
    """Where the kernel's range for outgoing connections' own ports begins (Linux's default: 32768)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A port nothing listens on now, for a server the caller starts soon after. Taken below the kernel's
    range for outgoing connections: a port from that range (what binding port 0 gives) can become the
    local end of any process's next connection before the server binds it, and the server then fails with
    "address already in use" (a make-up run's execution API met it). Never the same port twice in this
    process."""
    top = _ephemeral_start()
    candidates = list(range(LOWEST, top)) if top - LOWEST >= 1000 else []
    random.shuffle(candidates)
    for port in candidates[:200]:
        if port in _handed_out:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:  # no room below that range: the kernel's pick
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts connections on the port now."""
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0
