"""Sign-in, setup, emailed-link and account pages: plain forms over the
same operations as /api/auth, ending on the home page, signed in."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ehs_core.testing import PASSWORD, form_with, mail_text
from tests.core.auth.support import create_user, token_in


def test_first_run_opens_setup_and_ends_signed_in_on_home(client):
    response = client.get("/", status=302).follow(status=302)
    assert response.location.endswith("/setup")
    page = response.follow()
    form = form_with(page, "/setup")
    form["organizationName"], form["name"] = "Acme Works", "Ada Admin"
    form["email"], form["password"] = "ada@acme.test", PASSWORD
    home = form.submit(status=302).follow()
    assert "Hello, Ada Admin" in home.text
    assert "Acme Works" in home.text
    # Setup stays closed once done.
    assert client.get("/setup", status=302).location.endswith("/sign-in")


def test_setup_shows_field_errors_in_plain_words(client):
    form = form_with(client.get("/setup"), "/setup")
    form["organizationName"], form["name"], form["email"], form["password"] = "Acme", "Ada", "nope", "short"
    page = form.submit(status=400)
    assert 'id="email-error"' in page.text and "Must be an email address" in page.text
    assert 'id="password-error"' in page.text
    assert client.get("/api/setup").json == {"needsSetup": True}


def test_sign_in_with_password_goes_to_the_page_asked_for(admin, new_client):
    create_user(admin, "bob@acme.test")
    browser = new_client()
    asked = browser.get("/incidents?status=triage", status=302)
    assert "/sign-in?next=" in asked.location
    form = form_with(asked.follow(), "/sign-in")
    form["email"], form["password"] = "bob@acme.test", PASSWORD
    landed = form.submit(status=302)
    assert landed.location.endswith("/incidents?status=triage")
    assert browser.get("/api/auth/me").json["user"]["email"] == "bob@acme.test"


def test_wrong_password_is_refused_on_the_page_and_counts_towards_the_limit(admin, new_client):
    create_user(admin, "bob@acme.test")
    browser = new_client()
    for _ in range(10):
        form = form_with(browser.get("/sign-in"), "/sign-in")
        form["email"], form["password"] = "bob@acme.test", "wrong password!"
        page = form.submit(status=401)
        assert "Invalid email or password" in page.text
    form = form_with(browser.get("/sign-in"), "/sign-in")
    form["email"], form["password"] = "bob@acme.test", PASSWORD
    page = form.submit(status=429)
    assert "Too many sign-in attempts" in page.text and page.headers["Retry-After"]


def test_sign_in_does_not_redirect_to_another_site(admin, new_client):
    create_user(admin, "bob@acme.test")
    browser = new_client()
    for target in ("https://evil.test/", "//evil.test/x", "/\\evil.test"):
        form = form_with(browser.get("/sign-in", {"next": target}), "/sign-in")
        form["email"], form["password"] = "bob@acme.test", PASSWORD
        location = urlsplit(form.submit(status=302).location)
        assert (location.netloc, location.path) == ("ehs.test", "/")
        browser.post("/sign-out", status=302)


def test_a_crafted_next_never_breaks_sign_in_and_lands_on_home(admin, new_client):
    """A `next` with text outside Latin-1 or a control character gave a 500
    and no cookie after the right password."""
    create_user(admin, "bob@acme.test")
    browser = new_client()
    for target in ("/incidents/\u2603", "/caf\u00e9", "/\u0100", "/a\x01b", "/a\x7fb", "/a\x85b", "/a\u2028b",
                   "/\U0001f600", "/a\rSet-Cookie:x=1"):
        shown = browser.get("/sign-in", {"next": target}, status=200)
        assert form_with(shown, "/sign-in")["next"].value == "/", repr(target)
        landed = browser.post("/sign-in", {"email": "bob@acme.test", "password": PASSWORD, "next": target},
                              status=302)
        assert urlsplit(landed.location).path == "/", repr(target)
        assert browser.get("/api/auth/me").json["user"]["email"] == "bob@acme.test"
        browser.post("/sign-out", status=302)
    # A percent-encoded address still goes where it was asked.
    landed = browser.post("/sign-in", {"email": "bob@acme.test", "password": PASSWORD,
                                       "next": "/incidents?q=caf%C3%A9"}, status=302)
    assert landed.location.endswith("/incidents?q=caf%C3%A9")


def test_emailed_sign_in_link_signs_in_by_button_only(admin, new_client, inbox):
    create_user(admin, "bob@acme.test")
    browser = new_client()
    form = form_with(browser.get("/sign-in"), "/sign-in/link")
    form["link_email"] = "bob@acme.test"
    assert "sign-in link is on its way" in form.submit(status=302).follow().text
    mail = mail_text(inbox.wait(1)[0])
    link = re.search(r"http://ehs\.test(/auth/magic\?token=\S+)", mail)[1]
    page = browser.get(link)  # opening the link (a mail scanner would) uses nothing
    page = browser.get(link)
    assert browser.get("/api/auth/me", status=401)
    home = form_with(page, "/auth/magic").submit(status=302).follow()
    assert "Hello," in home.text
    # A used link says so when it opens, and offers a new one.
    again = new_client().get(link)
    assert "This link no longer works" in again.text and "Send me a new link" in again.text


def test_invitation_sets_a_password_and_lands_on_home(admin, new_client, inbox):
    admin.post_json("/api/users", {"name": "Ivy Invitee", "email": "ivy@acme.test", "role": "reporter"})
    token = token_in(inbox.wait(1)[0])
    browser = new_client()
    form = form_with(browser.get(f"/auth/reset?token={token}"), "/auth/reset")
    form["newPassword"], form["confirmPassword"] = "a brand new passphrase", "a different passphrase"
    assert "The two passwords differ" in form.submit(status=400).text
    form = form_with(browser.get(f"/auth/reset?token={token}"), "/auth/reset")
    form["newPassword"] = form["confirmPassword"] = "a brand new passphrase"
    home = form.submit(status=302).follow()
    assert "Hello, Ivy Invitee" in home.text
    assert new_client().login("ivy@acme.test", "a brand new passphrase")["user"]["name"] == "Ivy Invitee"


def test_pages_carry_the_strict_headers_and_no_inline_script(client):
    for path in ("/sign-in", "/setup", "/auth/magic?token=x", "/auth/reset?token=x"):
        response = client.get(path)
        csp = response.headers["Content-Security-Policy"]
        directives = {part.split()[0]: part.split()[1:] for part in csp.split(";") if part.strip()}
        assert directives["default-src"] == ["'none'"] and directives["script-src"] == ["'self'"]
        assert directives["frame-ancestors"] == ["'none'"] and "'unsafe-inline'" not in csp
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert "no-store" in response.headers["Cache-Control"]
        for attributes, inline in re.findall(r"<script([^>]*)>(.*?)</script>", response.text, re.S):
            assert inline.strip() == ""
            client.get(re.search(r'src="([^"]+)"', attributes)[1], status=200)
        assert "style=" not in response.text


def test_change_password_and_sign_out(admin, new_client):
    create_user(admin, "bob@acme.test")
    browser, other = new_client(), new_client()
    browser.login("bob@acme.test")
    other.login("bob@acme.test")
    form = form_with(browser.get("/account"), "/account/password")
    form["currentPassword"], form["newPassword"] = "not it at all", "another long passphrase"
    form["confirmPassword"] = "another long passphrase"
    assert "The current password is not correct" in form.submit(status=400).text
    form = form_with(browser.get("/account"), "/account/password")
    form["currentPassword"], form["newPassword"] = PASSWORD, "another long passphrase"
    form["confirmPassword"] = "another long passphrase"
    assert "Your password was changed" in form.submit(status=302).follow().text
    other.get("/api/auth/me", status=401)  # the other session ended
    browser.get("/api/auth/me", status=200)  # this one goes on
    form_with(browser.get("/"), "/sign-out").submit(status=302)
    browser.get("/api/auth/me", status=401)


def test_a_person_renames_themselves_and_sees_field_errors(make_user):
    rita = make_user("reporter", name="Rita Reporter")
    form = form_with(rita.get("/account"), "/account/name")
    assert form["name"].value == "Rita Reporter"
    form["name"] = "Rita R. Reyes"
    assert "Rita R. Reyes" in form.submit(status=302).follow().text
    assert rita.get("/api/auth/me").json["user"]["name"] == "Rita R. Reyes"
    refused = rita.post("/account/name", {"name": ""}, status=400)
    assert 'id="name-error"' in refused.text
    assert rita.get("/api/auth/me").json["user"]["name"] == "Rita R. Reyes"
    # Only their own name, and not their role: the form carries nothing else.
    rita.post("/account/name", {"name": "Boss", "role": "admin"}, status=302)
    assert rita.get("/api/auth/me").json["user"]["role"] == "reporter"


def test_sign_out_everywhere_ends_every_session(admin, new_client):
    laptop, phone = new_client(), new_client()
    for browser in (laptop, phone):
        browser.login("admin@acme.test")
    form = form_with(laptop.get("/account"), "/account/sign-out-everywhere")
    assert form.submit(status=302).location.endswith("/sign-in?signed=out")
    for browser in (laptop, phone, admin):
        browser.get("/api/auth/me", status=401)
        assert "/sign-in" in browser.get("/", status=302).location


def test_a_superseded_invitation_says_so_when_it_opens(admin, new_client, inbox):
    """After "Send the invitation again", the first mail's link opens on the
    page that says it no longer works and offers a new one, rather than a
    password form that then refuses the password."""
    ivy = admin.post_json("/api/users", {"name": "Ivy Invitee", "email": "ivy@acme.test",
                                         "role": "reporter"}).json
    first = token_in(inbox.wait(1)[0])
    admin.post(f"/admin/users/{ivy['user']['id']}/invitation", status=302)
    newest = token_in(inbox.wait(2)[1])
    stale = new_client().get(f"/auth/reset?token={first}")
    assert "This link no longer works" in stale.text and "replaced by a newer link" in stale.text
    assert 'name="newPassword"' not in stale.text and "Send me a new link" in stale.text
    fresh = new_client().get(f"/auth/reset?token={newest}")
    assert 'name="newPassword"' in fresh.text
    # Opening the page does not use the link up.
    assert 'name="newPassword"' in new_client().get(f"/auth/reset?token={newest}").text


def test_a_used_sign_in_link_says_so_when_it_opens(admin, new_client, inbox):
    admin.post_json("/api/users", {"name": "Bo", "email": "bo@acme.test", "role": "reporter",
                                   "password": "a long enough password"})
    new_client().post_json("/api/auth/magic-link", {"email": "bo@acme.test"})
    token = token_in(inbox.wait(1)[-1])
    form_with(new_client().get(f"/auth/magic?token={token}"), "/auth/magic").submit(status=302)
    again = new_client().get(f"/auth/magic?token={token}")
    assert "This link no longer works" in again.text and 'name="token"' not in again.text


def test_the_sign_in_page_carries_the_organizations_name(admin, new_client):
    page = new_client().get("/sign-in")
    assert "Sign in to Acme" in page.text
    assert "<title>Sign in" in page.text


def test_on_a_shared_computer_the_session_cookie_ends_with_the_browser(admin, new_client):
    """The sign-in cookie lives 30 days (ASVS 5.0 7.3.2 absolute limit; 12
    hours idle); 'Shared computer' signs in with a cookie the browser drops
    when it closes (no Max-Age or Expires)."""
    create_user(admin, "bob@acme.test")
    browser = new_client()
    form = form_with(browser.get("/sign-in"), "/sign-in")
    form["email"], form["password"] = "bob@acme.test", PASSWORD
    kept = form.submit(status=302).headers["Set-Cookie"]
    assert "Max-Age=2592000" in kept and "expires=" in kept.lower()
    browser.post("/sign-out", status=302)
    form = form_with(browser.get("/sign-in"), "/sign-in")
    form["email"], form["password"] = "bob@acme.test", PASSWORD
    form["shared"] = True
    shared = form.submit(status=302).headers["Set-Cookie"]
    assert shared.startswith("service_session=") and "HttpOnly" in shared
    assert "Max-Age" not in shared and "expires=" not in shared.lower()
    assert browser.get("/api/auth/me").json["user"]["email"] == "bob@acme.test"
