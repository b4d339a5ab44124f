"""The company sign-in's settings: a wrong value stops start-up naming the
setting; without an issuer the sign-in page has no company button."""

from __future__ import annotations

import re

import pytest

from ehs_core.config import configure
from ehs_core.settings import SettingsError
from ehs_core.testing import base_settings


@pytest.mark.parametrize(("key", "value", "says"), [
    ("oidc.issuer", "ftp://id.example.com", "expected the issuer's https:// URL"),
    ("oidc.issuer", "http://id.example.com", "expected the issuer's https:// URL"),
    ("oidc.issuer", "https://id.example.com/?tenant=1", "without ? or #"),
    ("oidc.auto_create_role", "owner", "expected one of reporter, supervisor, safety_manager, admin"),
    ("oidc.local_sign_in", "perhaps", "expected true or false"),
])
def test_a_wrong_company_sign_in_setting_stops_start_up(clean_environ, tmp_path, key, value, says):
    settings = base_settings(f"sqlite:///{tmp_path}/s.sqlite", 1025, str(tmp_path))
    with pytest.raises(SettingsError, match=rf"invalid setting {key} \(ini\): .*{re.escape(says)}"):
        configure(dict(settings, **{key: value}))


def test_the_issuer_may_be_plain_http_only_on_loopback(clean_environ, tmp_path):
    settings = base_settings(f"sqlite:///{tmp_path}/s.sqlite", 1025, str(tmp_path))
    config = configure(dict(settings, **{"oidc.issuer": "http://127.0.0.1:9000/", "oidc.client_id": "x",
                                         "oidc.auto_create_domains": "Acme.test, @plant.acme.test"}))
    assert config.registry.settings["oidc.issuer"] == "http://127.0.0.1:9000"
    assert config.registry.settings["oidc.auto_create_domains"] == {"acme.test", "plant.acme.test"}
    config.registry["db.engine"].dispose()


def test_without_an_issuer_the_sign_in_page_has_no_company_button(client):
    page = client.get("/sign-in")
    assert "/sign-in/oidc" not in page.text
    client.get("/sign-in/oidc", status=404)
    client.get("/sign-in/oidc/callback?code=x&state=y", status=404)
