"""A loopback HTTP server for the updater's tests: a signed feed and its assets, with the
ways a real server goes wrong (wrong size, too many bytes, a stall mid-download)."""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from lantide.update.keys import public_key_text
from lantide.update.release_tool import sign_feed


@dataclass
class Route:
    body: bytes
    status: int = 200
    content_length: int | None = None  # None: the body's length; -1: no header
    stall_after: int | None = None  # bytes sent before waiting for `release`
    release: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)  # stall over, all sent


class FeedServer:
    def __init__(self):
        self.routes: dict[str, Route] = {}
        self.requests: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                server.requests.append(self.path)
                route = server.routes.get(self.path)
                if route is None:
                    self.send_error(404)
                    return
                self.send_response(route.status)
                length = len(route.body) if route.content_length is None else route.content_length
                if length >= 0:
                    self.send_header("Content-Length", str(length))
                self.end_headers()
                try:
                    if route.stall_after is None:
                        self.wfile.write(route.body)
                        return
                    self.wfile.write(route.body[: route.stall_after])
                    self.wfile.flush()
                    route.release.wait(20)
                    route.finished.set()
                    self.wfile.write(route.body[route.stall_after :])
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base + path

    def close(self) -> None:
        for route in self.routes.values():
            route.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


class Release:
    """A test release: a key pair, an asset, and the feed describing it."""

    def __init__(
        self,
        server: FeedServer,
        version: str = "9.1.0",
        asset_body: bytes = b"new lantide build\n" * 1000,
        asset_key: str = "linux-tar-x86_64",
        notes: str = "## What's new\n- Faster.",
    ):
        self.server = server
        self.key = Ed25519PrivateKey.generate()
        self.public_text = public_key_text(self.key.public_key())
        self.asset_key = asset_key
        self.asset_body = asset_body
        self.payload = {
            "format": 1,
            "version": version,
            "date": "2026-12-01",
            "notes": notes,
            "assets": {
                asset_key: {
                    "url": "/dl/lantide-update.tar.gz",
                    "sha256": hashlib.sha256(asset_body).hexdigest(),
                    "size": len(asset_body),
                }
            },
        }
        self.publish()

    def publish(self, payload: dict | None = None, key=None) -> dict:
        signed = sign_feed(payload or self.payload, key or self.key)
        self.server.routes["/version_meta.json"] = Route(
            json.dumps(signed, indent=2).encode("utf-8")
        )
        self.server.routes["/dl/lantide-update.tar.gz"] = Route(self.asset_body)
        return signed

    @property
    def feed_url(self) -> str:
        return self.server.url("/version_meta.json")

    @property
    def keys(self) -> list:
        return [self.key.public_key()]
