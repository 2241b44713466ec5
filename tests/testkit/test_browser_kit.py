"""The browser kit itself: Debian's chromium under Playwright renders a page served on loopback."""

from __future__ import annotations

import http.server
import threading

import pytest

from testkit.browser import BrowserUnavailable, chromium_path, launch_chromium


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = "<!doctype html><html lang='pt-BR'><title>ok</title><h1 id='h'>Olá, vigia</h1>"
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def test_chromium_renders_a_loopback_page() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with launch_chromium() as browser:
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{server.server_port}/")
            assert page.locator("#h").inner_text() == "Olá, vigia"
            assert page.title() == "ok"
    finally:
        server.shutdown()


def test_a_missing_chromium_is_named_not_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORTGATE_CHROMIUM", "/nonexistent/chromium")
    with pytest.raises(BrowserUnavailable, match="apt-get install chromium"):
        chromium_path()
