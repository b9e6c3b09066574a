"""Loaded by every Python subprocess the tests start (it is on their PYTHONPATH):
the network is closed to them too, only loopback is reachable."""

import socket

_LOCAL = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


def _is_loopback(address) -> bool:
    if isinstance(address, (str, bytes)):
        return True
    host = address[0]
    if isinstance(host, bytes):
        host = host.decode()
    return host in _LOCAL or str(host).startswith("127.")


_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_getaddrinfo = socket.getaddrinfo


def connect(self, address):
    if not _is_loopback(address):
        raise OSError(f"network blocked in tests: connect to {address!r}")
    return _connect(self, address)


def connect_ex(self, address):
    if not _is_loopback(address):
        raise OSError(f"network blocked in tests: connect to {address!r}")
    return _connect_ex(self, address)


def getaddrinfo(host, *args, **kwargs):
    if host is not None and not _is_loopback((host,)):
        raise socket.gaierror(f"network blocked in tests: lookup of {host!r}")
    return _getaddrinfo(host, *args, **kwargs)


socket.socket.connect = connect
socket.socket.connect_ex = connect_ex
socket.getaddrinfo = getaddrinfo
