from ehs_core.testing import PASSWORD


def test_health_answers_ok_to_anyone(client):
    assert client.get("/api/health").json == {"ok": True}


def test_setup_is_needed_until_the_first_admin_exists(client):
    assert client.get("/api/setup").json == {"needsSetup": True}
    response = client.post_json("/api/setup", {"organizationName": "Acme", "name": "Ada",
                                               "email": "Ada@Acme.test", "password": PASSWORD})
    assert response.status_int == 201
    assert response.json["user"]["role"] == "admin"
    assert response.json["user"]["email"] == "ada@acme.test"
    assert response.json["organization"]["name"] == "Acme"
    assert client.get("/api/setup").json == {"needsSetup": False}
    # setup signed the admin in
    assert client.get("/api/auth/me").json["user"]["name"] == "Ada"


def test_setup_is_refused_once_an_admin_exists(admin, new_client):
    response = new_client().post_json(
        "/api/setup", {"organizationName": "Evil", "name": "Eve", "email": "eve@evil.test",
                       "password": PASSWORD}, status=409)
    assert response.json == {"error": "Setup has already been completed"}
