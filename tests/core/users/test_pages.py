"""The people page per role: admins invite (the mail names the role),
change roles, deactivate and reactivate, and send an invitation again;
safety managers only look; others are refused; the last admin stays."""

from __future__ import annotations

from ehs_core.testing import form_with
from tests.core.auth.support import token_in
from tests.core.workflow.support import body_of


def test_an_admin_invites_someone_and_the_mail_names_the_role(admin, inbox):
    form = form_with(admin.get("/admin/users"), "/admin/users")
    form["name"], form["email"], form["role"] = "Sam Supervisor", "sam@acme.test", "supervisor"
    page = form.submit(status=302).follow()
    assert "The invitation was sent." in page.text and "Invited, no password yet" in page.text
    [mail] = inbox.wait(1)
    assert mail["To"] == "sam@acme.test"
    assert "invited as a supervisor" in body_of(mail)
    sam = next(u for u in admin.get("/api/users").json if u["email"] == "sam@acme.test")
    assert sam["role"] == "supervisor" and sam["active"] is True


def test_invite_errors_are_shown_next_to_the_fields(admin, inbox):
    refused = admin.post("/admin/users", {"name": "", "email": "nope", "role": "reporter"}, status=400)
    assert 'id="name-error"' in refused.text and 'id="email-error"' in refused.text
    taken = admin.post("/admin/users", {"name": "Ada", "email": "admin@acme.test", "role": "reporter"},
                       status=409)
    assert "already exists" in taken.text


def test_change_role_deactivate_and_reactivate(admin, make_user):
    rita = make_user("reporter", name="Rita Reporter")
    user_id = rita.user["id"]
    page = admin.get("/admin/users")
    form = next(f for f in page.forms.values()
                if f.action == f"/admin/users/{user_id}" and "role" in f.fields)
    form["role"] = "supervisor"
    form.submit(status=302)
    assert rita.get("/api/auth/me").json["user"]["role"] == "supervisor"
    admin.post(f"/admin/users/{user_id}", {"active": "false"}, status=302)
    rita.get("/api/auth/me", status=401)  # deactivated: the session ended
    assert "Deactivated" in admin.get("/admin/users").text
    admin.post(f"/admin/users/{user_id}", {"active": "true"}, status=302)
    assert [u["active"] for u in admin.get("/api/users").json if u["id"] == user_id] == [True]


def test_the_last_admin_is_kept(admin):
    me = admin.get("/api/auth/me").json["user"]["id"]
    refused = admin.post(f"/admin/users/{me}", {"role": "reporter"}, status=409)
    assert "The last active admin cannot be demoted" in refused.text
    assert admin.get("/api/auth/me").json["user"]["role"] == "admin"


def test_an_invitation_sent_again_voids_the_first_link(admin, inbox, new_client):
    admin.post("/admin/users", {"name": "Ivy", "email": "ivy@acme.test", "role": "reporter"}, status=302)
    [first] = inbox.wait(1)
    ivy = next(u for u in admin.get("/api/users").json if u["email"] == "ivy@acme.test")
    inbox.clear()
    admin.post(f"/admin/users/{ivy['id']}/invitation", status=302)
    [second] = inbox.wait(1)
    old, new = token_in(first), token_in(second)
    assert old != new
    browser = new_client()
    browser.post_json("/api/auth/password-reset/confirm", {"token": old, "newPassword": "a long passphrase"},
                      status=400)  # the first link no longer works
    browser.post_json("/api/auth/password-reset/confirm", {"token": new, "newPassword": "a long passphrase"})
    # With a password chosen, there is nothing to send again.
    admin.post(f"/admin/users/{ivy['id']}/invitation", status=409)


def test_safety_managers_look_others_are_refused(make_user):
    manager, supervisor = make_user("safety_manager"), make_user("supervisor")
    page = manager.get("/admin/users")
    assert "Invite someone" not in page.text and "Change role" not in page.text
    manager.post("/admin/users", {"name": "X", "email": "x@acme.test", "role": "reporter"}, status=403)
    supervisor.get("/admin/users", status=403)
    assert "/admin/users" not in supervisor.get("/").text
