"""The pages emailed links open (/auth/magic, /auth/reset)."""

from __future__ import annotations

import re

import pytest

from tests.core.auth.support import create_user, token_in

PAGES = {"/auth/magic": "/api/auth/magic-link/verify", "/auth/reset": "/api/auth/password-reset/confirm"}
TOKEN = "SECRETtoken_value-123"


@pytest.mark.parametrize("path", sorted(PAGES))
def test_page_is_html_with_strict_headers(client, path):
    response = client.get(f"{path}?token={TOKEN}", status=200)
    assert response.content_type == "text/html"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    csp = response.headers["Content-Security-Policy"]
    directives = {part.split()[0]: part.split()[1:] for part in csp.split(";") if part.strip()}
    assert directives["default-src"] == ["'none'"]
    assert directives["script-src"] == ["'self'"]
    assert directives["frame-ancestors"] == ["'none'"]
    assert "'unsafe-inline'" not in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert "no-store" in response.headers["Cache-Control"]


@pytest.mark.parametrize("path", sorted(PAGES))
def test_page_posts_to_its_endpoint_and_does_not_echo_the_token(client, path):
    html = client.get(f"{path}?token={TOKEN}").text
    assert f'data-endpoint="{PAGES[path]}"' in html
    assert TOKEN not in html
    assert '<meta name="referrer" content="no-referrer">' in html


@pytest.mark.parametrize("path", sorted(PAGES))
def test_page_uses_only_same_origin_assets_the_csp_allows(client, path):
    html = client.get(path).text
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
    assert scripts, "the page needs its script"
    for attributes, inline in scripts:
        assert inline.strip() == ""  # inline code would be blocked by the CSP
        src = re.search(r'src="([^"]+)"', attributes)[1]
        assert src.startswith("/")
        client.get(src, status=200)
    for href in re.findall(r'<link[^>]+href="([^"]+)"', html):
        assert href.startswith("/")
        client.get(href, status=200)
    assert "style=" not in html


def test_page_script_sends_the_token_by_post_as_json(client):
    script = client.get("/static/auth-pages.js", status=200)
    assert "javascript" in script.content_type
    assert 'method: "POST"' in script.text
    assert '"Content-Type": "application/json"' in script.text


def test_opening_the_reset_page_does_not_use_the_link(admin, new_client, inbox):
    create_user(admin, "bob@acme.test")
    new_client().post_json("/api/auth/password-reset", {"email": "bob@acme.test"}, status=204)
    token = token_in(inbox.wait(1)[0])
    for _ in range(2):
        new_client().get(f"/auth/reset?token={token}", status=200)
    new_client().post_json("/api/auth/password-reset/confirm",
                           {"token": token, "newPassword": "a brand new passphrase"}, status=200)

