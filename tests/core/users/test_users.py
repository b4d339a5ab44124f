"""Users: listing, the assignable list, creation (with and without an
invitation) and updates by admins, including the last-active-admin rule and
the ending of sessions."""

import re

import pytest

from ehs_core.testing import PASSWORD, PUBLIC_URL, mail_text

ROLES = ["reporter", "supervisor", "safety_manager", "admin"]
NEW_PASSWORD = "another long passphrase 42"


def as_role(role, admin, make_user):
    return admin if role == "admin" else make_user(role)


def issue_paths(response):
    assert response.json["error"]
    return {issue["path"] for issue in response.json["issues"]}


def users_by_email(admin):
    return {user["email"]: user for user in admin.get("/api/users").json}


def admin_user(admin):
    return admin.get("/api/auth/me").json["user"]


def create(admin, status=201, **body):
    payload = {"name": "Nina New", "email": "nina@acme.test", "role": "reporter", **body}
    return admin.post_json("/api/users", payload, status=status)


def body_of(message):
    return mail_text(message)


# --- who may do what ------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "body"), [
    ("get", "/api/users", None),
    ("get", "/api/users/assignable", None),
    ("post", "/api/users", {"name": "X", "email": "x@acme.test", "role": "reporter",
                            "password": PASSWORD}),
    ("patch", "/api/users/1", {"name": "X"}),
])
def test_user_endpoints_need_a_session(admin, client, method, path, body):
    if body is None:
        response = client.get(path, status=401)
    else:
        response = getattr(client, f"{method}_json")(path, body, status=401)
    assert response.json == {"error": response.json["error"]}
    assert "issues" not in response.json


@pytest.mark.parametrize(("role", "status"), [
    ("reporter", 403), ("supervisor", 403), ("safety_manager", 200), ("admin", 200)])
def test_listing_users_needs_safety_manager(admin, make_user, role, status):
    browser = as_role(role, admin, make_user)
    response = browser.get("/api/users", status=status)
    if status == 200:
        emails = {user["email"] for user in response.json}
        assert "admin@acme.test" in emails
    else:
        assert "error" in response.json


@pytest.mark.parametrize(("role", "status"), [
    ("reporter", 403), ("supervisor", 200), ("safety_manager", 200), ("admin", 200)])
def test_assignable_users_needs_supervisor(admin, make_user, role, status):
    browser = as_role(role, admin, make_user)
    response = browser.get("/api/users/assignable", status=status)
    if status == 200:
        assert "Ada Admin" in {user["name"] for user in response.json}


@pytest.mark.parametrize(("role", "status"), [
    ("reporter", 403), ("supervisor", 403), ("safety_manager", 403), ("admin", 201)])
def test_creating_users_needs_admin(admin, make_user, role, status):
    browser = as_role(role, admin, make_user)
    browser.post_json("/api/users", {"name": "Zed", "email": "zed@acme.test", "role": "reporter",
                                     "password": PASSWORD}, status=status)
    assert ("zed@acme.test" in users_by_email(admin)) == (status == 201)


@pytest.mark.parametrize(("role", "status"), [
    ("reporter", 403), ("supervisor", 403), ("safety_manager", 403), ("admin", 200)])
def test_updating_users_needs_admin(admin, make_user, role, status):
    target = make_user("reporter", name="Target Person")
    browser = as_role(role, admin, make_user)
    browser.patch_json(f"/api/users/{target.user['id']}", {"name": "Renamed"}, status=status)
    expected = "Renamed" if status == 200 else "Target Person"
    assert users_by_email(admin)[target.user["email"]]["name"] == expected


def test_a_user_cannot_promote_themselves(admin, make_user):
    manager = make_user("safety_manager")
    manager.patch_json(f"/api/users/{manager.user['id']}", {"role": "admin"}, status=403)
    assert users_by_email(admin)[manager.user["email"]]["role"] == "safety_manager"


# --- listing ----------------------------------------------------------------


def test_list_contains_all_users_including_inactive_ones(admin, make_user):
    users = [make_user(role) for role in ROLES]
    admin.patch_json(f"/api/users/{users[0].user['id']}", {"active": False})
    listed = users_by_email(admin)
    assert set(listed) == {"admin@acme.test", *(u.user["email"] for u in users)}
    assert listed[users[0].user["email"]]["active"] is False
    assert listed[users[1].user["email"]]["active"] is True
    for browser in users:
        entry = listed[browser.user["email"]]
        assert entry["id"] == browser.user["id"]
        assert entry["name"] == browser.user["name"]
        assert entry["role"] == browser.user["role"]
    for entry in listed.values():
        assert not any("password" in key.lower() for key in entry)


def test_assignable_lists_only_active_users_with_id_name_and_role(admin, make_user):
    keep = make_user("reporter", name="Kim Keep")
    gone = make_user("supervisor", name="Gus Gone")
    admin.patch_json(f"/api/users/{gone.user['id']}", {"active": False})
    supervisor = make_user("supervisor", name="Sue Super")
    listed = supervisor.get("/api/users/assignable").json
    for entry in listed:
        assert set(entry) == {"id", "name", "role"}
    by_id = {entry["id"]: entry for entry in listed}
    assert by_id[keep.user["id"]] == {"id": keep.user["id"], "name": "Kim Keep", "role": "reporter"}
    assert gone.user["id"] not in by_id
    assert admin_user(admin)["id"] in by_id
    assert supervisor.user["id"] in by_id


# --- creation -----------------------------------------------------------------


def test_create_with_password_is_not_invited_and_can_sign_in(admin, new_client, inbox):
    response = create(admin, email="Pat@Acme.TEST", role="supervisor", name="  Pat Person ",
                      password=PASSWORD)
    assert response.status_int == 201
    assert response.json["invited"] is False
    user = response.json["user"]
    assert user["name"] == "Pat Person"
    assert user["email"] == "pat@acme.test"
    assert user["role"] == "supervisor"
    assert user["active"] is True
    assert isinstance(user["id"], int)
    assert users_by_email(admin)["pat@acme.test"]["id"] == user["id"]
    browser = new_client()
    me = browser.login("pat@acme.test")
    assert me["user"]["id"] == user["id"]
    assert browser.get("/api/auth/me").json["user"]["role"] == "supervisor"
    assert inbox.settle() == []


def test_create_without_password_sends_an_invitation(admin, new_client, inbox):
    response = create(admin, email="ivy@acme.test", name="Ivy Invited", role="safety_manager")
    assert response.status_int == 201
    assert response.json["invited"] is True
    assert response.json["user"]["email"] == "ivy@acme.test"
    assert response.json["user"]["active"] is True
    inbox.wait(1)
    messages = inbox.to("ivy@acme.test")
    assert len(messages) == 1
    body = body_of(messages[0])
    assert f"{PUBLIC_URL}/auth/reset?token=" in body
    token = re.search(re.escape(f"{PUBLIC_URL}/auth/reset?token=") + r"([A-Za-z0-9_\-]+)", body).group(1)
    assert "Acme Works" in messages[0]["Subject"] + body
    # the invited user has no password yet
    new_client().post_json("/api/auth/login", {"email": "ivy@acme.test", "password": PASSWORD},
                           status=401)
    # the invitation is completed through the password-reset confirmation
    browser = new_client()
    me = browser.post_json("/api/auth/password-reset/confirm",
                           {"token": token, "newPassword": NEW_PASSWORD}).json
    assert me["user"]["email"] == "ivy@acme.test"
    assert browser.get("/api/auth/me").json["user"]["role"] == "safety_manager"
    new_client().login("ivy@acme.test", NEW_PASSWORD)


def test_duplicate_email_is_refused_with_409(admin, inbox):
    create(admin, password=PASSWORD)
    response = create(admin, name="Other", password=PASSWORD, status=409)
    assert response.json["error"]
    response = create(admin, name="Other", email="NINA@acme.test", status=409)
    assert response.json["error"]
    create(admin, name="Other", email="  Admin@ACME.test ", password=PASSWORD, status=409)
    named = [u for u in admin.get("/api/users").json if u["email"] == "nina@acme.test"]
    assert len(named) == 1 and named[0]["name"] == "Nina New"
    # no invitation went out for the refused (password-less) attempt
    assert inbox.settle() == []


@pytest.mark.parametrize(("body", "path"), [
    ({"role": "owner"}, "role"),
    ({"role": "Admin"}, "role"),
    ({"role": 5}, "role"),
    ({"role": None}, "role"),
    ({"email": "not-an-email"}, "email"),
    ({"email": "a@b"}, "email"),
    ({"email": 12}, "email"),
    ({"email": "x" * 320 + "@acme.test"}, "email"),
    ({"password": "short1234"}, "password"),
    ({"password": "aaaaaaaaaaaaaa"}, "password"),
    ({"password": 1234567890123}, "password"),
    ({"name": ""}, "name"),
    ({"name": "   "}, "name"),
    ({"name": "n" * 201}, "name"),
    ({"name": None}, "name"),
])
def test_create_validation_errors(admin, inbox, body, path):
    payload = {"name": "Val Id", "email": "valid@acme.test", "role": "reporter",
               "password": PASSWORD, **body}
    response = admin.post_json("/api/users", payload, status=400)
    assert path in issue_paths(response)
    for issue in response.json["issues"]:
        assert set(issue) == {"path", "message"}
        assert isinstance(issue["message"], str) and issue["message"]
    assert "valid@acme.test" not in users_by_email(admin)


@pytest.mark.parametrize("missing", ["name", "email", "role"])
def test_create_requires_name_email_and_role(admin, missing):
    payload = {"name": "Val Id", "email": "valid@acme.test", "role": "reporter", "password": PASSWORD}
    del payload[missing]
    assert missing in issue_paths(admin.post_json("/api/users", payload, status=400))


@pytest.mark.parametrize("body", [[], "text", None, 5])
def test_create_body_must_be_a_json_object(admin, body):
    response = admin.post_json("/api/users", body, status=400)
    assert response.json["issues"]


def test_create_refuses_fields_it_does_not_take(admin, new_client):
    response = admin.post_json("/api/users", {
        "name": "Max Mass", "email": "max@acme.test", "role": "reporter", "password": PASSWORD,
        "id": 999_999, "active": False, "organizationId": 424242,
    }, status=400)
    assert {issue["path"] for issue in response.json["issues"]} == {"id", "active", "organizationId"}
    assert "max@acme.test" not in users_by_email(admin)


# --- updates ----------------------------------------------------------------


def test_update_name_role_and_active(admin, make_user):
    target = make_user("reporter", name="Rita Reporter")
    url = f"/api/users/{target.user['id']}"
    updated = admin.patch_json(url, {"name": " Rita Renamed "}).json
    assert updated["name"] == "Rita Renamed"
    assert updated["role"] == "reporter"
    assert updated["email"] == target.user["email"]
    updated = admin.patch_json(url, {"role": "supervisor"}).json
    assert updated["role"] == "supervisor"
    # the new role applies to the user's existing session
    target.get("/api/users/assignable", status=200)
    target.get("/api/users", status=403)
    updated = admin.patch_json(url, {"active": False}).json
    assert updated["active"] is False
    updated = admin.patch_json(url, {"active": True}).json
    assert updated["active"] is True
    listed = users_by_email(admin)[target.user["email"]]
    assert listed == {**listed, "name": "Rita Renamed", "role": "supervisor", "active": True}


def test_demotion_takes_effect_immediately(admin, make_user):
    manager = make_user("safety_manager")
    manager.get("/api/users", status=200)
    admin.patch_json(f"/api/users/{manager.user['id']}", {"role": "reporter"})
    manager.get("/api/users", status=403)
    manager.get("/api/users/assignable", status=403)


def test_empty_update_changes_nothing(admin, make_user):
    target = make_user("supervisor", name="Sam Same")
    updated = admin.patch_json(f"/api/users/{target.user['id']}", {}).json
    assert updated == {**updated, "name": "Sam Same", "role": "supervisor", "active": True}
    target.get("/api/auth/me", status=200)


def test_update_refuses_email_and_other_fields_it_does_not_take(admin, make_user, new_client):
    target = make_user("reporter")
    url = f"/api/users/{target.user['id']}"
    response = admin.patch_json(url, {"email": "stolen@acme.test", "id": 77777, "name": "New"},
                                status=400)
    assert {issue["path"] for issue in response.json["issues"]} == {"email", "id"}
    assert "stolen@acme.test" not in users_by_email(admin)
    assert users_by_email(admin)[target.user["email"]]["name"] == target.user["name"]
    new_client().login(target.user["email"])


@pytest.mark.parametrize(("body", "path"), [
    ({"active": "false"}, "active"),
    ({"active": 0}, "active"),
    ({"active": None}, "active"),
    ({"role": 5}, "role"),
    ({"role": "boss"}, "role"),
    ({"role": None}, "role"),
    ({"name": ""}, "name"),
    ({"name": 42}, "name"),
    ({"name": None}, "name"),
    ({"password": "tooshort"}, "password"),
    ({"password": None}, "password"),
])
def test_update_validation_errors(admin, make_user, body, path):
    target = make_user("reporter", name="Vic Valid")
    response = admin.patch_json(f"/api/users/{target.user['id']}", body, status=400)
    assert path in issue_paths(response)
    listed = users_by_email(admin)[target.user["email"]]
    assert listed == {**listed, "name": "Vic Valid", "role": "reporter", "active": True}
    target.get("/api/auth/me", status=200)


def test_update_validation_reports_every_bad_field(admin, make_user):
    target = make_user("reporter")
    response = admin.patch_json(f"/api/users/{target.user['id']}",
                                {"active": "no", "role": 1, "name": ""}, status=400)
    assert {"active", "role", "name"} <= issue_paths(response)


@pytest.mark.parametrize("path", ["/api/users/999999", "/api/users/123456789"])
def test_update_unknown_user_is_404(admin, path):
    response = admin.patch_json(path, {"name": "Nobody"}, status=404)
    assert response.json["error"]


def test_update_with_non_numeric_id_is_404(admin):
    admin.patch_json("/api/users/abc", {"name": "Nobody"}, status=404)


# --- the last active admin --------------------------------------------------


@pytest.mark.parametrize("body", [{"role": "safety_manager"}, {"role": "reporter"}, {"active": False},
                                  {"role": "supervisor", "active": False}])
def test_last_active_admin_cannot_be_demoted_or_deactivated(admin, body):
    me = admin_user(admin)
    response = admin.patch_json(f"/api/users/{me['id']}", body, expect_errors=True)
    assert 400 <= response.status_int < 500
    assert response.json["error"]
    listed = users_by_email(admin)["admin@acme.test"]
    assert listed["role"] == "admin"
    assert listed["active"] is True
    admin.get("/api/auth/me", status=200)


def test_last_active_admin_may_still_be_renamed(admin):
    me = admin_user(admin)
    updated = admin.patch_json(f"/api/users/{me['id']}", {"name": "Ada Renamed", "role": "admin",
                                                          "active": True}).json
    assert updated["name"] == "Ada Renamed"
    assert updated["role"] == "admin" and updated["active"] is True


def test_an_inactive_admin_does_not_count(admin, make_user):
    other = make_user("admin")
    admin.patch_json(f"/api/users/{other.user['id']}", {"active": False})
    me = admin_user(admin)
    response = admin.patch_json(f"/api/users/{me['id']}", {"role": "reporter"}, expect_errors=True)
    assert 400 <= response.status_int < 500
    response = admin.patch_json(f"/api/users/{me['id']}", {"active": False}, expect_errors=True)
    assert 400 <= response.status_int < 500
    assert users_by_email(admin)["admin@acme.test"]["role"] == "admin"
    admin.get("/api/users", status=200)


def test_an_admin_can_be_demoted_when_another_active_admin_exists(admin, make_user):
    other = make_user("admin")
    me = admin_user(admin)
    updated = admin.patch_json(f"/api/users/{me['id']}", {"role": "supervisor"}).json
    assert updated["role"] == "supervisor"
    admin.get("/api/users", status=403)
    # now `other` is the last active admin
    response = other.patch_json(f"/api/users/{other.user['id']}", {"role": "reporter"},
                                expect_errors=True)
    assert 400 <= response.status_int < 500
    assert other.patch_json(f"/api/users/{me['id']}", {"role": "admin"}).json["role"] == "admin"


def test_an_admin_can_be_deactivated_when_another_active_admin_exists(admin, make_user, new_client):
    other = make_user("admin")
    updated = admin.patch_json(f"/api/users/{other.user['id']}", {"active": False}).json
    assert updated["active"] is False
    other.get("/api/auth/me", status=401)
    # the remaining admin is now the last one
    me = admin_user(admin)
    response = admin.patch_json(f"/api/users/{me['id']}", {"active": False}, expect_errors=True)
    assert 400 <= response.status_int < 500
    # an admin may deactivate themselves while another active admin exists
    third = make_user("admin")
    assert third.patch_json(f"/api/users/{third.user['id']}", {"active": False}).json["active"] is False
    third.get("/api/auth/me", status=401)


def test_an_inactive_admin_can_be_demoted_and_reactivated(admin, make_user):
    other = make_user("admin")
    url = f"/api/users/{other.user['id']}"
    admin.patch_json(url, {"active": False})
    assert admin.patch_json(url, {"role": "reporter"}).json["role"] == "reporter"
    assert admin.patch_json(url, {"active": True, "role": "admin"}).json["role"] == "admin"


# --- sessions -------------------------------------------------------------------


def test_deactivating_a_user_ends_their_sessions_and_blocks_sign_in(admin, make_user, new_client):
    target = make_user("supervisor")
    second = new_client()
    second.login(target.user["email"])
    target.get("/api/auth/me", status=200)
    admin.patch_json(f"/api/users/{target.user['id']}", {"active": False})
    target.get("/api/auth/me", status=401)
    second.get("/api/users/assignable", status=401)
    new_client().post_json("/api/auth/login", {"email": target.user["email"], "password": PASSWORD},
                           status=401)
    # the admin's own session is untouched
    admin.get("/api/users", status=200)
    # old sessions stay ended after reactivation; signing in works again
    admin.patch_json(f"/api/users/{target.user['id']}", {"active": True})
    target.get("/api/auth/me", status=401)
    new_client().login(target.user["email"])


def test_deactivated_user_cannot_use_an_emailed_link(admin, make_user, new_client, inbox):
    response = create(admin, email="ina@acme.test")
    assert response.json["invited"] is True
    inbox.wait(1)
    body = body_of(inbox.to("ina@acme.test")[0])
    token = body.split("token=", 1)[1].split()[0]
    admin.patch_json(f"/api/users/{response.json['user']['id']}", {"active": False})
    new_client().post_json("/api/auth/password-reset/confirm",
                           {"token": token, "newPassword": NEW_PASSWORD}, status=400)


def test_admin_setting_a_password_ends_sessions_and_the_new_one_works(admin, make_user, new_client):
    target = make_user("reporter")
    admin.patch_json(f"/api/users/{target.user['id']}", {"password": NEW_PASSWORD})
    target.get("/api/auth/me", status=401)
    new_client().post_json("/api/auth/login", {"email": target.user["email"], "password": PASSWORD},
                           status=401)
    fresh = new_client()
    assert fresh.login(target.user["email"], NEW_PASSWORD)["user"]["id"] == target.user["id"]
    fresh.get("/api/auth/me", status=200)
    admin.get("/api/users", status=200)


def emailed_token(client, inbox, email, path):
    client.post_json(path, {"email": email}, status=204)
    [message] = inbox.wait(1)
    inbox.clear()
    return body_of(message).split("token=", 1)[1].split()[0]


def test_a_reactivated_user_cannot_use_a_link_mailed_before_deactivation(admin, make_user, new_client,
                                                                         inbox):
    target = make_user("reporter")
    inbox.settle(0.1)
    inbox.clear()
    magic = emailed_token(new_client(), inbox, target.user["email"], "/api/auth/magic-link")
    reset = emailed_token(new_client(), inbox, target.user["email"], "/api/auth/password-reset")
    admin.patch_json(f"/api/users/{target.user['id']}", {"active": False})
    admin.patch_json(f"/api/users/{target.user['id']}", {"active": True})
    new_client().post_json("/api/auth/magic-link/verify", {"token": magic}, status=400)
    new_client().post_json("/api/auth/password-reset/confirm",
                           {"token": reset, "newPassword": NEW_PASSWORD}, status=400)
    new_client().login(target.user["email"])  # the account itself works again


def test_a_password_set_by_an_admin_retires_pending_links(admin, make_user, new_client, inbox):
    target = make_user("reporter")
    inbox.settle(0.1)
    inbox.clear()
    magic = emailed_token(new_client(), inbox, target.user["email"], "/api/auth/magic-link")
    reset = emailed_token(new_client(), inbox, target.user["email"], "/api/auth/password-reset")
    admin.patch_json(f"/api/users/{target.user['id']}", {"password": NEW_PASSWORD})
    new_client().post_json("/api/auth/magic-link/verify", {"token": magic}, status=400)
    new_client().post_json("/api/auth/password-reset/confirm",
                           {"token": reset, "newPassword": "yet another passphrase 7"}, status=400)
    new_client().login(target.user["email"], NEW_PASSWORD)


def test_admin_can_give_an_invited_user_a_password(admin, new_client, inbox):
    user = create(admin, email="inv@acme.test").json["user"]
    admin.patch_json(f"/api/users/{user['id']}", {"password": NEW_PASSWORD})
    new_client().login("inv@acme.test", NEW_PASSWORD)


def test_password_is_not_stripped_or_returned(admin, make_user, new_client):
    target = make_user("reporter")
    spaced = "  spaced passphrase  "
    response = admin.patch_json(f"/api/users/{target.user['id']}", {"password": spaced})
    assert not any("password" in key.lower() for key in response.json)
    new_client().login(target.user["email"], spaced)


def test_renaming_or_changing_role_keeps_sessions(admin, make_user):
    target = make_user("reporter")
    admin.patch_json(f"/api/users/{target.user['id']}", {"name": "Still Here", "role": "supervisor"})
    assert target.get("/api/auth/me").json["user"]["name"] == "Still Here"
