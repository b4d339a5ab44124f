"""Sign-in through the organization's OpenID Provider (Entra ID, Okta,
Google Workspace…): the authorization code flow of OpenID Connect Core 1.0
§3.1 with PKCE (RFC 7636, S256), `state` bound to the browser and `nonce`
(RFC 9700, the OAuth 2.0 Security BCP, §2.1.1 and §4.7), the ID token's
signature checked against the issuer's published keys (JWKS, found by
OpenID Connect Discovery 1.0) and its `iss`, `aud`, `exp` and `nonce` checked
(OIDC Core §3.1.3.7). authlib does the protocol; this module keeps what
the service decides: whom a verified ID token signs in.

A person is matched by the issuer's `sub` once linked (OIDC Core §5.7: the
only stable key; an e-mail can be reassigned), by a verified e-mail the
first time, when the link is made. An unknown person with a verified e-mail
of an allowed domain may be created (`oidc.auto_create_domains`, with the
role `oidc.auto_create_role`). A deactivated user is refused, as for a
password (ASVS 5 7.4.2). The session is the same `service_session`.
"""

from __future__ import annotations

import datetime as dt
import hmac
import logging
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.oidc.core import CodeIDToken
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet
from joserfc.jws import JWSRegistry
from pyramid.config import Configurator
from pyramid.i18n import TranslationStringFactory
from pyramid.registry import Registry
from pyramid.request import Request
from sqlalchemy import delete, select

from ehs_core.auth.models import OIDCRequest, UserIdentity
from ehs_core.auth.tokens import digest
from ehs_core.db import utcnow
from ehs_core.security import Role
from ehs_core.settings import boolean
from ehs_core.users.models import Organization, User, normalize_email
from ehs_core.users.services import create_user

log = logging.getLogger(__name__)
_ = TranslationStringFactory("ehs")

REGISTRY_KEY = "ehs.oidc"
# The cookie that binds a sign-in's `state` to the browser that began it.
STATE_COOKIE = "ehs_oidc_state"
CALLBACK_PATH = "/sign-in/oidc/callback"
# How long a person may take at the provider.
REQUEST_LIFETIME = dt.timedelta(minutes=10)
# The scopes asked for: the subject, the e-mail and whether the provider
# verified it, and the name (OIDC Core §5.4).
SCOPES = "openid email profile"
HTTP_TIMEOUT = 10
# Claims saying the provider verified the e-mail: OIDC Core §5.1's, and Entra
# ID's optional `xms_edov` ("e-mail domain owner verified"), as Entra sends
# no `email_verified`.
VERIFIED_CLAIMS = ("email_verified", "xms_edov")
# Metadata and keys are read again after this long (and the keys at once
# when a token names a key not seen yet: the provider rotated them).
METADATA_MAX_AGE = 3600
# Clock skew allowed on `exp` and `iat`.
LEEWAY = 120


class SignInRefused(Exception):
    """The provider's answer signs nobody in; `message` is for the person."""

    def __init__(self, message: str, status: int = 403) -> None:
        super().__init__(message)
        self.message, self.status = message, status


def _issuer(value: str) -> str:
    """The issuer's URL: https (OIDC Discovery §4.3); plain http only on
    this machine's loopback, for a provider run beside it in development."""
    value = value.strip().rstrip("/")
    if not value:
        return value
    parts = urlsplit(value)
    loopback = parts.scheme == "http" and parts.hostname in {"127.0.0.1", "localhost", "::1"}
    if not parts.hostname or not (parts.scheme == "https" or loopback):
        raise ValueError("expected the issuer's https:// URL")
    if parts.query or parts.fragment:
        raise ValueError("expected the issuer's URL without ? or #")
    return value


def _domains(value: str) -> frozenset[str]:
    return frozenset(d.strip().lower().lstrip("@") for d in value.replace(",", " ").split() if d.strip())


def _role(value: str) -> str:
    value = value.strip() or Role.reporter
    if value not in Role.__members__:
        raise ValueError(f"expected one of {', '.join(Role)}")
    return value


@dataclass(frozen=True)
class OIDCSettings:
    issuer: str
    client_id: str
    client_secret: str
    label: str
    auto_create_domains: frozenset[str]
    auto_create_role: str
    local_sign_in: bool

    @property
    def enabled(self) -> bool:
        return bool(self.issuer and self.client_id)


def oidc_settings(registry: Registry) -> OIDCSettings:
    return registry[REGISTRY_KEY].settings


def local_sign_in_allowed(registry: Registry, role: str) -> bool:
    """Password and emailed-link sign-in: always for admins (a way in when
    the provider is down or misconfigured), for others unless the company
    sign-in replaces them (`oidc.local_sign_in = false`)."""
    settings = oidc_settings(registry)
    return role == Role.admin or settings.local_sign_in or not settings.enabled


class Provider:
    """The provider's metadata and keys, read on first use and kept for an
    hour by the worker (OpenID Connect Discovery 1.0 §4)."""

    def __init__(self, settings: OIDCSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._metadata: dict[str, Any] | None = None
        self._keys: Any = None
        self._read_at = 0.0

    def _get(self, url: str) -> dict[str, Any]:
        answer = requests.get(url, timeout=HTTP_TIMEOUT, allow_redirects=False)
        answer.raise_for_status()
        return answer.json()

    def metadata(self) -> dict[str, Any]:
        with self._lock:
            if self._metadata is None or time.monotonic() - self._read_at > METADATA_MAX_AGE:
                metadata = self._get(f"{self.settings.issuer}/.well-known/openid-configuration")
                # Discovery §4.3: the issuer in the document must be the one configured.
                if metadata.get("issuer", "").rstrip("/") != self.settings.issuer:
                    raise SignInRefused(_("The identity provider's settings do not match its address"), 502)
                self._metadata, self._keys = metadata, None
                self._read_at = time.monotonic()
            return self._metadata

    def keys(self, refresh: bool = False) -> Any:
        metadata = self.metadata()
        with self._lock:
            if self._keys is None or refresh:
                self._keys = KeySet.import_key_set(self._get(metadata["jwks_uri"]))
            return self._keys

    def client(self, request: Request, **kw: Any) -> OAuth2Session:
        return OAuth2Session(self.settings.client_id, self.settings.client_secret, scope=SCOPES,
                             redirect_uri=redirect_uri(request), code_challenge_method="S256", **kw)


def provider(registry: Registry) -> Provider:
    return registry[REGISTRY_KEY]


def redirect_uri(request: Request) -> str:
    """The callback registered at the provider: on the configured public
    URL, never on the request's Host."""
    return request.registry.settings["ehs.public_url"] + CALLBACK_PATH


def begin(request: Request, next_path: str) -> tuple[str, str]:
    """A new sign-in: (the provider's authorization URL, the `state` to keep
    in the browser's cookie)."""
    prov = provider(request.registry)
    endpoint = prov.metadata()["authorization_endpoint"]
    state, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    verifier = secrets.token_urlsafe(64)  # RFC 7636 §4.1: 43-128 characters
    dbsession = request.dbsession
    now = utcnow()
    dbsession.execute(delete(OIDCRequest).where(OIDCRequest.expires_at < now))
    dbsession.add(OIDCRequest(state_hash=digest(state), nonce=nonce, code_verifier=verifier,
                              next_path=next_path, expires_at=now + REQUEST_LIFETIME))
    url, _ = prov.client(request).create_authorization_url(
        endpoint, state=state, nonce=nonce, code_verifier=verifier)
    return url, state


def _pending(request: Request, state: str, cookie: str | None) -> OIDCRequest:
    """The sign-in this answer belongs to, used up: its `state` must be the
    one this browser's cookie holds (RFC 9700 §4.7.1: a `state` bound to the
    user agent stops another's answer being fed to it, the login CSRF)."""
    if not state or not cookie or not hmac.compare_digest(state.encode(), cookie.encode()):
        log.warning("OpenID Connect answer refused: its state is not this browser's")
        raise SignInRefused(_("This sign-in was not started here, or it took too long. Try again."), 400)
    dbsession = request.dbsession
    pending = dbsession.execute(
        select(OIDCRequest).where(OIDCRequest.state_hash == digest(state))).scalar()
    if pending is None:
        raise SignInRefused(_("This sign-in was not started here, or it took too long. Try again."), 400)
    dbsession.delete(pending)
    dbsession.flush()
    if pending.expires_at < utcnow():
        raise SignInRefused(_("This sign-in took too long. Try again."), 400)
    return pending


def verify_id_token(prov: Provider, id_token: str, nonce: str, access_token: str | None) -> dict[str, Any]:
    """The ID token's claims, checked as OIDC Core §3.1.3.7 says: signed by
    one of the issuer's keys with an algorithm it announces, `iss` the
    issuer, `aud` this client, not expired, and the `nonce` this sign-in sent
    (a token made for another sign-in is refused). As authlib's own OpenID
    client does it, with joserfc (authlib's JOSE library)."""
    settings = prov.settings
    algorithms = prov.metadata().get("id_token_signing_alg_values_supported") or ["RS256"]
    registry = JWSRegistry(algorithms=[a for a in algorithms if a != "none"], strict_check_header=False)
    options = {"iss": {"essential": True, "value": settings.issuer},
               "aud": {"essential": True, "value": settings.client_id},
               "sub": {"essential": True}, "exp": {"essential": True}}
    params = {"nonce": nonce, "client_id": settings.client_id, "access_token": access_token}
    try:
        try:
            token = jwt.decode(id_token, prov.keys(), registry=registry)
        except InvalidKeyIdError:  # signed with a key published since we read them
            token = jwt.decode(id_token, prov.keys(refresh=True), registry=registry)
        claims = CodeIDToken(token.claims, token.header, options, params)
        claims.validate(leeway=LEEWAY)
    except (JoseError, ValueError) as exc:
        log.warning("OpenID Connect ID token refused: %s", exc)
        raise SignInRefused(_("The identity provider's answer could not be verified.")) from exc
    return dict(claims)


def finish(request: Request, params: Any, cookie: str | None) -> tuple[User, str]:
    """The provider's answer at the callback: (the user it signs in, where
    to go). Raises SignInRefused."""
    state = params.get("state", "")
    pending = _pending(request, state if isinstance(state, str) else "", cookie)
    if params.get("error"):
        log.info("OpenID Connect sign-in ended at the provider: %s", str(params.get("error"))[:100])
        raise SignInRefused(_("The sign-in was cancelled or refused by your company's sign-in."), 400)
    code = params.get("code")
    if not isinstance(code, str) or not code:
        raise SignInRefused(_("The identity provider's answer was incomplete. Try again."), 400)
    prov = provider(request.registry)
    try:
        metadata = prov.metadata()
        client = prov.client(request, state=state)
        token = client.fetch_token(metadata["token_endpoint"], code=code, code_verifier=pending.code_verifier,
                                   timeout=HTTP_TIMEOUT)
        if "id_token" not in token:
            raise ValueError("no ID token in the token endpoint's answer")
        claims = verify_id_token(prov, token["id_token"], pending.nonce, token.get("access_token"))
    except SignInRefused:
        raise
    except Exception as exc:  # authlib's OAuthError, the network's, a provider's odd answer
        log.warning("OpenID Connect code exchange failed: %s", exc)
        raise SignInRefused(_("The identity provider did not confirm the sign-in. Try again."), 502) from exc
    if "email" not in claims and "userinfo_endpoint" in metadata:
        claims = _with_userinfo(client, metadata["userinfo_endpoint"], claims)
    return match_user(request, prov.settings, claims), pending.next_path


def _with_userinfo(client: OAuth2Session, endpoint: str, claims: dict[str, Any]) -> dict[str, Any]:
    """Claims the ID token left out (Okta's, by default), from the UserInfo
    endpoint; its `sub` must be the token's (OIDC Core §5.3.2)."""
    try:
        answer = client.get(endpoint, timeout=HTTP_TIMEOUT, allow_redirects=False)
        answer.raise_for_status()
        info = answer.json()
    except (requests.RequestException, ValueError) as exc:
        log.warning("OpenID Connect UserInfo failed: %s", exc)
        return claims
    if info.get("sub") != claims["sub"]:
        return claims
    return {**info, **claims}


def match_user(request: Request, settings: OIDCSettings, claims: dict[str, Any]) -> User:
    """Whom the verified claims sign in: the user linked to this issuer and
    subject; else, the first time, the user whose e-mail the provider has
    verified (and the link is made); else a new user when the verified
    e-mail's domain is allowed. Deactivated users are refused."""
    dbsession = request.dbsession
    subject = str(claims["sub"])
    link = dbsession.execute(select(UserIdentity).where(
        UserIdentity.issuer == settings.issuer, UserIdentity.subject == subject)).scalar()
    verified = any(claims.get(name) in (True, "true") for name in VERIFIED_CLAIMS)
    email = normalize_email(claims["email"]) if isinstance(claims.get("email"), str) else ""
    if link is not None:
        user = dbsession.get(User, link.user_id)
        link.last_used_at = utcnow()
    else:
        if not (email and verified):
            raise SignInRefused(_("Your company sign-in did not confirm your e-mail address, so it cannot "
                                "be matched to an account here. Ask an admin."))
        user = dbsession.execute(select(User).where(User.email == email)).scalar()
        if user is not None:
            other = dbsession.execute(select(UserIdentity.id).where(
                UserIdentity.user_id == user.id, UserIdentity.issuer == settings.issuer)).first()
            if other is not None:
                # The address now belongs to another account at the provider:
                # never move the link without an admin.
                log.warning("OpenID Connect: user %s is linked to another subject", user.id)
                raise SignInRefused(_("This account is linked to another company account. Ask an admin."))
        elif email.rpartition("@")[2] in settings.auto_create_domains:
            name = claims.get("name") if isinstance(claims.get("name"), str) else ""
            organization = dbsession.execute(select(Organization.id).order_by(Organization.id)).scalar()
            user, _invited = create_user(request, {"name": (name.strip() or email.partition("@")[0])[:200],
                                            "email": email, "role": settings.auto_create_role},
                                  organization_id=organization)
            log.info("OpenID Connect: user %s created at their first sign-in", user.id)
        else:
            log.warning("OpenID Connect sign-in by an unknown person refused")
            raise SignInRefused(_("No account here matches your company sign-in. Ask an admin to add you."))
        if user.active:
            dbsession.add(UserIdentity(user_id=user.id, issuer=settings.issuer, subject=subject))
            log.info("OpenID Connect: user %s linked to their company account", user.id)
    if not user.active:
        log.warning("OpenID Connect sign-in of deactivated user %s refused", user.id)
        raise SignInRefused(_("This account is deactivated. Ask an admin."))
    dbsession.flush()
    log.info("user %s signed in with OpenID Connect", user.id)
    return user


def includeme(config: Configurator) -> None:
    """The settings (ini keys `oidc.*`, or `EHS_OIDC_*`); no issuer or no
    client id: no company sign-in."""
    add = config.add_setting
    settings = OIDCSettings(
        issuer=add("oidc.issuer", "EHS_OIDC_ISSUER", _issuer, ""),
        client_id=add("oidc.client_id", "EHS_OIDC_CLIENT_ID", str.strip, ""),
        client_secret=add("oidc.client_secret", "EHS_OIDC_CLIENT_SECRET", str.strip, ""),
        label=add("oidc.button_label", "EHS_OIDC_BUTTON_LABEL", str.strip,
                  "Sign in with your company account"),
        auto_create_domains=add("oidc.auto_create_domains", "EHS_OIDC_AUTO_CREATE_DOMAINS", _domains, ""),
        auto_create_role=add("oidc.auto_create_role", "EHS_OIDC_AUTO_CREATE_ROLE", _role, "reporter"),
        local_sign_in=add("oidc.local_sign_in", "EHS_OIDC_LOCAL_SIGN_IN", boolean, "true"),
    )
    config.registry[REGISTRY_KEY] = Provider(settings)
