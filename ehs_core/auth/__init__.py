"""Setup, sign-in and sessions."""

from pyramid.config import Configurator

from ehs_core.auth import ratelimit
from ehs_core.auth.passwords import REGISTRY_KEY, Passwords
from ehs_core.auth.sessions import session_identity


def includeme(config: Configurator) -> None:
    config.registry[REGISTRY_KEY] = Passwords(config.get_settings()["ehs.password_profile"])
    config.add_identity_provider("session", session_identity)
    config.include(".origin")
    config.include(".oidc")  # the company's identity provider, if configured
    config.add_periodic_job(ratelimit.PURGE_JOB, ratelimit.purge_job, ratelimit.PURGE_SCHEDULE)
    for name in ("magic_link", "password_reset", "invitation"):
        config.add_mail_template(name, f"ehs_core.mail:templates/{name}.txt")

    config.add_route("setup", "/api/setup")
    config.add_route("auth.login", "/api/auth/login")
    config.add_route("auth.magic_link", "/api/auth/magic-link")
    config.add_route("auth.magic_link_verify", "/api/auth/magic-link/verify")
    config.add_route("auth.password_reset", "/api/auth/password-reset")
    config.add_route("auth.password_reset_confirm", "/api/auth/password-reset/confirm")
    config.add_route("auth.logout", "/api/auth/logout")
    config.add_route("auth.me", "/api/auth/me")
    config.add_route("auth.password", "/api/auth/password")
    config.scan(".views")
    config.scan(".listeners")
    config.include(".pages")  # sign-in, setup, emailed-link pages, account
