"""Settings: read from the ini file, overridden by the environment, typed and
checked at start-up (runtime contract, "Settings")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pyramid.paster import get_appsettings

import ehs_core
from ehs_core.settings import SettingsError, load
from ehs_core.testing import base_settings

ROOT = Path(__file__).resolve().parents[2]

# The runtime contract's table: env var, ini key, an ini value, an environment
# value, and what the service must make of the environment value.
CONTRACT = [
    ("EHS_DATABASE_URL", "sqlalchemy.url", "sqlite:///ini.sqlite",
     "postgresql+psycopg://ehs:secret@db:5432/ehs", "postgresql+psycopg://ehs:secret@db:5432/ehs"),
    ("EHS_AUTO_MIGRATE", "ehs.auto_migrate", "false", "true", True),
    ("EHS_PLUGINS", "ehs.plugins", "osha kiosk analytics", "kiosk,osha", ("kiosk", "osha")),
    ("EHS_PUBLIC_URL", "ehs.public_url", "http://127.0.0.1:6543", "https://ehs.example.com",
     "https://ehs.example.com"),
    ("EHS_SMTP_HOST", "mail.host", "localhost", "smtp.example.com", "smtp.example.com"),
    ("EHS_SMTP_PORT", "mail.port", "1025", "587", 587),
    ("EHS_MAIL_FROM", "mail.default_sender", "ehs@localhost", "safety@example.com", "safety@example.com"),
    ("EHS_HUEY_URL", "ehs.huey_url", "", "redis://cache:6379/0", "redis://cache:6379/0"),
    ("EHS_UPLOAD_DIR", "ehs.upload_dir", "/srv/ini-uploads", "/srv/env-uploads", "/srv/env-uploads"),
    ("MAX_UPLOAD_MB", "ehs.max_upload_mb", "10", "25", 25),
    ("TZ", "ehs.timezone", "UTC", "America/Chicago", "America/Chicago"),
    ("EHS_SESSION_SECURE", "ehs.session_secure", "false", "true", True),
]

INI = {key: ini_value for _env, key, ini_value, _value, _expected in CONTRACT}


@pytest.fixture
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's or CI's own EHS_* variables must not leak into
    tests that go through os.environ."""
    for name in list(os.environ):
        if name.startswith("EHS_") and not name.startswith("EHS_TEST_"):
            monkeypatch.delenv(name)
    monkeypatch.delenv("MAX_UPLOAD_MB", raising=False)
    monkeypatch.delenv("TZ", raising=False)


# --- ini values -----------------------------------------------------------


def test_development_ini_values_are_parsed_into_typed_settings():
    settings = load(dict(get_appsettings(str(ROOT / "development.ini"))), environ={})
    assert settings["sqlalchemy.url"] == f"sqlite:///{ROOT}/var/ehs.sqlite"
    assert settings["ehs.auto_migrate"] is True
    assert settings["ehs.plugins"] == ("osha", "kiosk", "analytics")
    assert settings["ehs.public_url"] == "http://127.0.0.1:6543"
    assert settings["mail.host"] == "localhost"
    assert settings["mail.port"] == 1025
    assert settings["mail.default_sender"] == "ehs@localhost"
    assert settings["ehs.huey_url"] == ""
    assert settings["ehs.upload_dir"] == f"{ROOT}/var/uploads"
    assert settings["ehs.max_upload_mb"] == 10
    assert settings["ehs.session_secure"] is False
    # not set in development.ini: the server's own zone
    assert settings["ehs.timezone"] == ""


def test_production_ini_is_postgresql_redis_secure_cookies_and_no_auto_migration():
    settings = load(dict(get_appsettings(str(ROOT / "production.ini"))), environ={})
    assert settings["sqlalchemy.url"].startswith("postgresql+psycopg://")
    assert settings["ehs.auto_migrate"] is False
    assert settings["ehs.huey_url"].startswith("redis://")
    assert settings["ehs.session_secure"] is True
    assert settings["mail.port"] == 25


@pytest.mark.parametrize(("raw", "expected"), [
    ("osha kiosk analytics", ("osha", "kiosk", "analytics")),
    ("osha,kiosk", ("osha", "kiosk")),
    (" osha ,\n kiosk\tanalytics ", ("osha", "kiosk", "analytics")),
    ("", ()),
])
def test_plugin_names_may_be_separated_by_spaces_or_commas(raw, expected):
    assert load({"ehs.plugins": raw}, environ={})["ehs.plugins"] == expected


@pytest.mark.parametrize("raw", ["true", "True", "yes", "on", "1"])
def test_true_spellings_are_understood(raw):
    assert load({"ehs.auto_migrate": raw}, environ={})["ehs.auto_migrate"] is True


@pytest.mark.parametrize("raw", ["false", "FALSE", "no", "off", "0"])
def test_false_spellings_are_understood(raw):
    assert load({"ehs.auto_migrate": raw}, environ={})["ehs.auto_migrate"] is False


def test_public_url_is_reduced_to_its_origin_so_links_and_origin_checks_agree():
    settings = load({"ehs.public_url": "https://EHS.Example.com/"}, environ={})
    assert settings["ehs.public_url"] == "https://ehs.example.com"


def test_settings_that_are_not_ours_pass_through_for_pyramid_and_its_add_ons():
    settings = load({"retry.attempts": "3", "pyramid.reload_templates": "true"}, environ={})
    assert settings["retry.attempts"] == "3"
    assert settings["pyramid.reload_templates"] == "true"


# --- the environment wins ------------------------------------------------------


@pytest.mark.parametrize(("env", "key", "ini_value", "value", "expected"), CONTRACT,
                         ids=[row[0] for row in CONTRACT])
def test_each_contract_env_var_overrides_exactly_its_ini_key(env, key, ini_value, value, expected):
    from_ini = load(INI, environ={})
    from_env = load(INI, environ={env: value})
    assert from_env[key] == expected
    assert from_env[key] != from_ini[key]
    changed = {name for name in from_env if from_env[name] != from_ini[name]}
    assert changed == {key}


def test_environment_is_read_from_os_environ_by_default(clean_environ, monkeypatch):
    monkeypatch.setenv("EHS_SMTP_HOST", "relay.example.com")
    monkeypatch.setenv("MAX_UPLOAD_MB", "3")
    monkeypatch.setenv("TZ", "Europe/Berlin")
    settings = load(INI)
    assert settings["mail.host"] == "relay.example.com"
    assert settings["ehs.max_upload_mb"] == 3
    assert settings["ehs.timezone"] == "Europe/Berlin"


@pytest.mark.parametrize("source", ["ini", "env"])
def test_plain_postgresql_urls_are_rewritten_to_the_psycopg3_driver(source):
    url = "postgresql://ehs:secret@db.example.com:5432/ehs"
    if source == "ini":
        settings = load({"sqlalchemy.url": url}, environ={})
    else:
        settings = load({"sqlalchemy.url": "sqlite:///x.sqlite"}, environ={"EHS_DATABASE_URL": url})
    assert settings["sqlalchemy.url"] == "postgresql+psycopg://ehs:secret@db.example.com:5432/ehs"


def test_a_psycopg_url_is_kept_as_it_is():
    url = "postgresql+psycopg://ehs@127.0.0.1:5432/ehs"
    assert load({"sqlalchemy.url": url}, environ={})["sqlalchemy.url"] == url


# --- wrong values stop start-up, naming the setting ------------------------------------

INVALID = [
    ("EHS_AUTO_MIGRATE", "ehs.auto_migrate", "maybe"),
    ("EHS_SESSION_SECURE", "ehs.session_secure", "sometimes"),
    ("EHS_SMTP_PORT", "mail.port", "70000"),
    ("EHS_SMTP_PORT", "mail.port", "0"),
    ("EHS_SMTP_PORT", "mail.port", "smtp"),
    ("MAX_UPLOAD_MB", "ehs.max_upload_mb", "0"),
    ("MAX_UPLOAD_MB", "ehs.max_upload_mb", "-5"),
    ("MAX_UPLOAD_MB", "ehs.max_upload_mb", "ten"),
    ("TZ", "ehs.timezone", "Mars/Olympus"),
    ("EHS_PUBLIC_URL", "ehs.public_url", "ftp://x"),
    ("EHS_PUBLIC_URL", "ehs.public_url", "ehs.example.com"),
    ("EHS_DATABASE_URL", "sqlalchemy.url", "mysql://ehs:secret@db/ehs"),
    ("EHS_HUEY_URL", "ehs.huey_url", "amqp://rabbit/"),
    ("EHS_PLUGINS", "ehs.plugins", "osha;rm"),
]


@pytest.mark.parametrize(("env", "key", "value"), INVALID, ids=[f"{e}={v}" for e, _k, v in INVALID])
def test_a_wrong_environment_value_is_refused_naming_the_env_var(env, key, value):
    with pytest.raises(SettingsError) as caught:
        load(INI, environ={env: value})
    assert env in str(caught.value)
    assert repr(value) in str(caught.value)


@pytest.mark.parametrize(("env", "key", "value"), INVALID, ids=[f"{k}={v}" for _e, k, v in INVALID])
def test_a_wrong_ini_value_is_refused_naming_the_ini_key(env, key, value):
    with pytest.raises(SettingsError) as caught:
        load(dict(INI, **{key: value}), environ={})
    assert key in str(caught.value)


def test_a_valid_environment_value_rescues_a_wrong_ini_value():
    settings = load(dict(INI, **{"mail.port": "70000"}), environ={"EHS_SMTP_PORT": "2525"})
    assert settings["mail.port"] == 2525


@pytest.fixture
def good_settings(tmp_path) -> dict[str, str]:
    return base_settings(f"sqlite:///{tmp_path / 'ehs.sqlite'}", 1025, str(tmp_path / "uploads"))


@pytest.mark.parametrize(("key", "value"), [
    ("mail.port", "70000"),
    ("ehs.auto_migrate", "maybe"),
    ("ehs.max_upload_mb", "0"),
    ("ehs.timezone", "Mars/Olympus"),
    ("sqlalchemy.url", "mysql://ehs@db/ehs"),
])
def test_the_wsgi_app_refuses_to_start_with_a_wrong_ini_value(clean_environ, good_settings, key, value):
    with pytest.raises(SystemExit) as caught:
        ehs_core.main({}, **dict(good_settings, **{key: value}))
    assert key in str(caught.value.code)
    assert "Traceback" not in str(caught.value.code)


def test_the_wsgi_app_refuses_to_start_with_a_wrong_env_value(clean_environ, good_settings, monkeypatch):
    monkeypatch.setenv("EHS_SMTP_PORT", "70000")
    with pytest.raises(SystemExit) as caught:
        ehs_core.main({}, **good_settings)
    assert "EHS_SMTP_PORT" in str(caught.value.code)


def test_the_wsgi_app_refuses_to_start_with_an_unknown_plugin(clean_environ, good_settings):
    with pytest.raises(SystemExit) as caught:
        ehs_core.main({}, **dict(good_settings, **{"ehs.plugins": "osha no_such_plugin"}))
    assert "no_such_plugin" in str(caught.value.code)
    assert "ehs.plugins" in str(caught.value.code)


# --- attachment storage ---------------------------------------------------------


@pytest.mark.parametrize(("raw", "expected"), [
    ("", "local"),
    ("local", "local"),
    (" database ", "database"),
    ("s3://ehs-files", "s3://ehs-files"),
    ("s3://ehs-files/acme/attachments/", "s3://ehs-files/acme/attachments"),
])
def test_storage_names_a_local_folder_the_database_or_an_s3_bucket(raw, expected):
    assert load({"ehs.storage": raw}, environ={})["ehs.storage"] == expected
    assert load({}, environ={"EHS_STORAGE": raw})["ehs.storage"] == expected


@pytest.mark.parametrize("value", ["disk", "postgres", "ftp://files", "s3://", "s3://Bad_Bucket",
                                   "s3://ehs-files?region=eu"])
def test_an_unknown_storage_stops_start_up_naming_the_setting(value):
    with pytest.raises(SettingsError, match=r"EHS_STORAGE \(environment\)"):
        load({}, environ={"EHS_STORAGE": value})

def test_the_json_body_limit_comes_from_ehs_max_json_kb():
    assert load({}, {})["ehs.max_json_kb"] == 1024
    assert load({"ehs.max_json_kb": "64"}, {})["ehs.max_json_kb"] == 64
    assert load({"ehs.max_json_kb": "64"}, {"EHS_MAX_JSON_KB": "16"})["ehs.max_json_kb"] == 16
    with pytest.raises(SettingsError, match="EHS_MAX_JSON_KB"):
        load({}, {"EHS_MAX_JSON_KB": "0"})


def test_the_photo_pixel_limit_comes_from_ehs_max_image_pixels():
    assert load({}, {})["ehs.max_image_pixels"] == 50_000_000
    assert load({"ehs.max_image_pixels": "24000000"}, {})["ehs.max_image_pixels"] == 24_000_000
    assert load({}, {"EHS_MAX_IMAGE_PIXELS": "100000000"})["ehs.max_image_pixels"] == 100_000_000
    with pytest.raises(SettingsError, match="EHS_MAX_IMAGE_PIXELS"):
        load({}, {"EHS_MAX_IMAGE_PIXELS": "lots"})
