"""Ports for the local servers: outside the kernel's range for outgoing connections, never twice."""

from __future__ import annotations

import socket

from local_platform.ports import LOWEST, _ephemeral_start, free_port


def test_free_ports_are_below_the_outgoing_range_distinct_and_bindable():
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == 50 and all(LOWEST <= p < _ephemeral_start() for p in ports)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", ports[0]))  # nothing holds it
