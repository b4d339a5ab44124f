"""Every setting of the service, read in one place.

A setting lives in the ini file and may be overridden by an environment
variable (the environment wins). Each one is parsed and checked here, so a
wrong value stops start-up with a message naming the setting instead of
failing later inside a request.

Plugins declare their own settings the same way with the `add_setting`
directive (`config.add_setting("kiosk.x", "EHS_KIOSK_X", positive_int, "5")`):
read from the ini file or the environment and checked while the plugin is
included, so a bad value stops start-up like a bad core setting.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pyramid.config import Configurator


class SettingsError(ValueError):
    """A setting has a value the service cannot run with."""


def _boolean(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in {"true", "yes", "on", "1"}:
        return True
    if lowered in {"false", "no", "off", "0", ""}:
        return False
    raise ValueError("expected true or false")


def _positive_int(value: str) -> int:
    number = int(value.strip())
    if number <= 0:
        raise ValueError("expected a positive whole number")
    return number


def _port(value: str) -> int:
    number = int(value.strip())
    if not 0 < number < 65536:
        raise ValueError("expected a port number between 1 and 65535")
    return number


def _names(value: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(name for name in re.split(r"[\s,]+", value.strip()) if name))
    for name in names:
        if not re.fullmatch(r"[A-Za-z_][\w.-]*", name):
            raise ValueError(f"{name!r} is not a plugin name")
    return names


def _public_url(value: str) -> str:
    parts = urlsplit(value.strip())
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise ValueError("expected an absolute http:// or https:// URL")
    if parts.query or parts.fragment or parts.path not in {"", "/"}:
        raise ValueError("expected a bare origin such as https://ehs.example.com")
    host = parts.netloc.lower()
    # Browsers omit the default port from Origin, so the setting must too.
    default = {"http": ":80", "https": ":443"}[parts.scheme]
    host = host.removesuffix(default)
    return f"{parts.scheme}://{host}"


def _database_url(value: str) -> str:
    value = value.strip()
    if not re.match(r"^(sqlite|postgresql)(\+\w+)?://", value):
        raise ValueError("expected a sqlite:// or postgresql+psycopg:// URL")
    if value.startswith("postgresql://"):
        # psycopg 3 is the driver we ship; plain URLs would ask for psycopg2.
        value = "postgresql+psycopg://" + value[len("postgresql://") :]
    return value


def _huey_url(value: str) -> str:
    value = value.strip()
    if value and not value.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError("expected empty (in-process) or a redis:// URL")
    return value


def _timezone(value: str) -> str:
    name = value.strip().lstrip(":")
    if not name:
        return ""
    if name.startswith("/"):
        # TZ=:/etc/localtime style: a file path, not a zone name.
        marker = "zoneinfo/"
        if marker not in os.path.realpath(name):
            return ""
        name = os.path.realpath(name).split(marker, 1)[1]
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {name!r}") from exc
    return name


def _storage(value: str) -> str:
    """Where attachment bytes live (ehs_core/attachments/backends)."""
    value = value.strip() or "local"
    if value in {"local", "database"}:
        return value
    parts = urlsplit(value)
    if parts.scheme != "s3":
        raise ValueError("expected local, database or s3://bucket[/prefix]")
    # S3 bucket naming rules: 3-63 lowercase letters, digits, dots and hyphens.
    if not re.fullmatch(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]", parts.netloc):
        raise ValueError(f"{parts.netloc!r} is not an S3 bucket name")
    if parts.query or parts.fragment:
        raise ValueError("expected s3://bucket[/prefix] without ? or #")
    if importlib.util.find_spec("boto3") is None:
        raise ValueError("S3 storage needs boto3: install ehs-service[s3]")
    prefix = parts.path.strip("/")
    return f"s3://{parts.netloc}/{prefix}" if prefix else f"s3://{parts.netloc}"


def _password_profile(value: str) -> str:
    value = value.strip() or "default"
    if value not in {"default", "test"}:
        raise ValueError("expected default or test")
    return value


@dataclass(frozen=True)
class Setting:
    key: str
    env: str | None
    parse: Callable[[str], Any]
    default: str


SETTINGS: tuple[Setting, ...] = (
    Setting("sqlalchemy.url", "EHS_DATABASE_URL", _database_url, "sqlite:///var/ehs.sqlite"),
    Setting("ehs.auto_migrate", "EHS_AUTO_MIGRATE", _boolean, "false"),
    Setting("ehs.plugins", "EHS_PLUGINS", _names, ""),
    Setting("ehs.public_url", "EHS_PUBLIC_URL", _public_url, "http://127.0.0.1:6543"),
    Setting("mail.host", "EHS_SMTP_HOST", str.strip, "localhost"),
    Setting("mail.port", "EHS_SMTP_PORT", _port, "1025"),
    Setting("mail.default_sender", "EHS_MAIL_FROM", str.strip, "ehs@localhost"),
    Setting("ehs.huey_url", "EHS_HUEY_URL", _huey_url, ""),
    Setting("ehs.upload_dir", "EHS_UPLOAD_DIR", str.strip, "var/uploads"),
    Setting("ehs.storage", "EHS_STORAGE", _storage, "local"),
    Setting("ehs.max_upload_mb", "MAX_UPLOAD_MB", _positive_int, "10"),
    Setting("ehs.timezone", "TZ", _timezone, ""),
    Setting("ehs.session_secure", "EHS_SESSION_SECURE", _boolean, "false"),
    # Not in the runtime contract's table: knobs for operators and tests.
    Setting("ehs.mail_retries", "EHS_MAIL_RETRIES", _positive_int, "8"),
    Setting("ehs.mail_retry_delay", "EHS_MAIL_RETRY_DELAY", _positive_int, "60"),
    Setting("ehs.password_profile", None, _password_profile, "default"),
    Setting("ehs.pool_size", "EHS_POOL_SIZE", _positive_int, "5"),
    # JSON request bodies, far below the upload limit (ehs_core.intake).
    Setting("ehs.max_json_kb", "EHS_MAX_JSON_KB", _positive_int, "1024"),
    # Photos decoding to more pixels (all frames) are refused from their header
    # (ehs_core/attachments/decoding.py).
    Setting("ehs.max_image_pixels", "EHS_MAX_IMAGE_PIXELS", _positive_int, "50000000"),
)


def read(setting: Setting, raw: Mapping[str, Any], environ: Mapping[str, str]) -> Any:
    """One setting's typed value: the environment, else the ini, else the
    default; raises SettingsError naming where a bad value came from."""
    source = f"{setting.key} (ini)"
    value = raw.get(setting.key)
    if setting.env and environ.get(setting.env) is not None:
        value = environ[setting.env]
        source = f"{setting.env} (environment)"
    if value is None:
        value = setting.default
        source = f"{setting.key} (default)"
    if not isinstance(value, str):
        return value  # already typed (e.g. by tests)
    try:
        return setting.parse(value)
    except ValueError as exc:
        raise SettingsError(f"invalid setting {source}: {exc} (got {value!r})") from None


def load(raw: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Merge ini values with the environment and return typed settings.

    Keys that are not ours (pyramid.*, retry.*, logging) pass through as they
    are, so Pyramid and its add-ons still see their own settings.
    """
    environ = os.environ if environ is None else environ
    settings: dict[str, Any] = dict(raw)
    for setting in SETTINGS:
        settings[setting.key] = read(setting, raw, environ)
    return settings


# Parsers plugins may use with add_setting (a parser takes the text and
# returns the value, or raises ValueError saying what was expected).
boolean = _boolean
positive_int = _positive_int
port = _port


def add_setting(config: Configurator, name: str, env: str | None, parser: Callable[[str], Any],
                default: str) -> Any:
    """Directive: declare the setting `name` (ini key), overridable by the
    environment variable `env` (EHS_…), parsed by `parser`, `default` when
    neither is given. The typed value is in `registry.settings[name]` at once
    (and returned), so the rest of the plugin's includeme can use it; a bad
    value stops start-up naming the setting. Two declarations of one name,
    or a name the core owns, conflict at start-up."""
    from pyramid.exceptions import ConfigurationError

    from ehs_core.directives import register_once

    if any(core.key == name for core in SETTINGS):
        raise ConfigurationError(f"setting {name!r} belongs to the core")
    if env is not None and not env.startswith("EHS_"):
        raise ConfigurationError(f"the environment variable of setting {name!r} must start with EHS_")
    settings = config.registry.settings
    value = read(Setting(name, env, parser, default), settings, os.environ)
    settings[name] = value
    register_once(config, "ehs.setting", name, lambda: None)
    return value


def includeme(config: Configurator) -> None:
    config.add_directive("add_setting", add_setting)
