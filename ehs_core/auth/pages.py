"""Sign-in, first-run setup, emailed-link pages, sign-out and the password
change, as pages. They call the operations of `signin` that the JSON API
calls and validate with the same schemas; every form posts and redirects.

Emailed links carry their token in the address; the page only shows a
button, and the token is used up by the POST that button sends, so mail
scanners that follow links cannot spend it.
"""

from __future__ import annotations

import re
from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.httpexceptions import HTTPBadRequest, HTTPFound, HTTPNotFound
from pyramid.request import Request
from pyramid.response import Response
from pyramid.security import NO_PERMISSION_REQUIRED

from ehs_core.auth import oidc, signin
from ehs_core.auth.schemas import (
    EmailSchema,
    LoginSchema,
    PasswordChangeSchema,
    ResetConfirmSchema,
    SetupSchema,
)
from ehs_core.auth.sessions import end_current_session, end_user_sessions, start_session
from ehs_core.auth.tokens import TokenPurpose, token_is_live
from ehs_core.db import writes_on_get
from ehs_core.errors import APIError
from ehs_core.mail.choices import OPTIONAL_MAIL, set_mail_off
from ehs_core.security import Permission
from ehs_core.ui.forms import TEXT, errors_of, json_values
from ehs_core.users.models import User
from ehs_core.users.schemas import OwnSettingsSchema, UserUpdateSchema
from ehs_core.users.services import update_user

PUBLIC = NO_PERMISSION_REQUIRED
# Only a path of this site is a place to go after signing in (no open redirect),
# written as a browser writes an address: printable ASCII, anything else
# percent-encoded. Text outside Latin-1 or a control character in the
# Location header was a 500 after the right password, and no cookie.
LOCAL_PATH = re.compile(r"^/(?![/\\])[\x21-\x7e]*$")


def safe_next(request: Request, value: Any) -> str:
    """The page to go to after signing in: `value` when it is a path of
    this site (ASVS 5.0 3.7.2, no open redirect), else home."""
    if isinstance(value, str) and LOCAL_PATH.match(value) and not value.startswith("/sign-in"):
        return value
    return request.route_path("home")


def signed_in_redirect(request: Request, user: User, to: str, shared: bool = False) -> HTTPFound:
    response = HTTPFound(location=to)
    start_session(request, response, user, shared=shared)
    return response


def is_signed_in(request: Request) -> bool:
    return bool(request.identity and request.identity.is_user)


def sign_in_form(request: Request) -> Any:
    if signin.needs_setup(request):
        return HTTPFound(request.route_path("page.setup"))
    if is_signed_in(request):
        return HTTPFound(safe_next(request, request.GET.get("next")))
    return {"values": {}, "errors": {}, "next": safe_next(request, request.GET.get("next")),
            "link_sent": request.GET.get("link") == "sent", "organization_name": organization_name(request)}


def organization_name(request: Request) -> str | None:
    """The organization's name on the sign-in page, so people know they
    are at their own company's service."""
    organization = signin.organization(request)
    return organization.name if organization is not None else None


def company_sign_in(request: Request) -> dict[str, Any]:  # request.company_sign_in
    """What the sign-in page says of the company's sign-in: its button's
    label (None when none is configured), and whether passwords and emailed
    links are still for everyone or only for admins."""
    settings = oidc.oidc_settings(request.registry)
    return {"oidc_label": settings.label if settings.enabled else None,
            "local_for_admins_only": settings.enabled and not settings.local_sign_in}


def start_company_sign_in(request: Request) -> Any:
    """The button (a link: the page's `form-action 'self'` would stop a
    form's redirect to the provider): off to the provider, with the `state`
    in a cookie that only this browser sends back (SameSite=Lax: the
    provider's redirect back is a top-level GET, which carries it)."""
    if not oidc.oidc_settings(request.registry).enabled:
        raise HTTPNotFound()
    target = safe_next(request, request.GET.get("next"))
    try:
        url, state = oidc.begin(request, target)
    except (oidc.SignInRefused, OSError, ValueError, KeyError) as exc:
        oidc.log.warning("OpenID Connect sign-in could not start: %s", exc)
        request.response.status = 502
        message = oidc._("Your company's sign-in cannot be reached just now. Try again in a moment.")
        return {"values": {}, "next": target, "link_sent": False,
                "errors": {"_": request.localizer.translate(message)}}
    response = HTTPFound(location=url)
    response.set_cookie(oidc.STATE_COOKIE, state, httponly=True, samesite="Lax", path=oidc.CALLBACK_PATH,
                        secure=request.registry.settings["ehs.session_secure"],
                        max_age=int(oidc.REQUEST_LIFETIME.total_seconds()))
    return response


def company_sign_in_callback(request: Request) -> Any:
    """The provider's answer: signed in and on to where the person was
    going, or the sign-in page saying why not."""
    if not oidc.oidc_settings(request.registry).enabled:
        raise HTTPNotFound()
    try:
        user, target = oidc.finish(request, request.GET, request.cookies.get(oidc.STATE_COOKIE))
    except oidc.SignInRefused as refusal:
        request.response.status = refusal.status
        request.response.delete_cookie(oidc.STATE_COOKIE, path=oidc.CALLBACK_PATH)
        return {"values": {}, "next": request.route_path("home"), "link_sent": False,
                "errors": {"_": request.localizer.translate(refusal.message)}}
    response = signed_in_redirect(request, user, safe_next(request, target))
    response.delete_cookie(oidc.STATE_COOKIE, path=oidc.CALLBACK_PATH)
    return response


def sign_in(request: Request) -> Any:
    values = json_values(request.POST, {"email": TEXT, "password": TEXT})
    target = safe_next(request, request.POST.get("next"))
    page = {"values": {"email": values.get("email", "")}, "next": target, "link_sent": False,
            "organization_name": organization_name(request)}
    try:
        data = LoginSchema().deserialize(values)
        user = signin.authenticate(request, data["email"], data["password"])
    except (colander.Invalid, APIError) as exc:
        request.response.status = 400
        return page | {"errors": errors_of(exc)}
    except signin.Refusal as refusal:
        request.response.status = refusal.status
        request.response.headers.update(refusal.headers)
        return page | {"errors": {"_": request.localizer.translate(refusal.message)}}
    return signed_in_redirect(request, user, target, shared=bool(request.POST.get("shared")))


def send_sign_in_link(request: Request) -> Any:
    values = {"email": request.POST.get("link_email", request.POST.get("email", ""))}
    try:
        data = EmailSchema().deserialize(values)
    except colander.Invalid as exc:
        request.response.status = 400
        errors = {"link_email" if k == "email" else k: v for k, v in errors_of(exc).items()}
        return {"values": {"link_email": values["email"]}, "errors": errors,
                "next": request.route_path("home"), "link_sent": False,
                "organization_name": organization_name(request)}
    signin.send_link(request, TokenPurpose.magic_link, data["email"])
    return HTTPFound(request.route_path("page.sign_in", _query={"link": "sent"}))


def setup_form(request: Request) -> Any:
    if not signin.needs_setup(request):
        return HTTPFound(request.route_path("page.sign_in"))
    return {"values": {}, "errors": {}}


def setup(request: Request) -> Any:
    spec = {"organizationName": TEXT, "name": TEXT, "email": TEXT, "password": TEXT}
    values = json_values(request.POST, spec)
    try:
        user = signin.complete_setup(request, SetupSchema().deserialize(values))
    except (colander.Invalid, APIError) as exc:
        if isinstance(exc, APIError) and exc.status == 409:
            return HTTPFound(request.route_path("page.sign_in"))
        request.response.status = 400
        return {"values": values | {"password": ""}, "errors": errors_of(exc)}
    return signed_in_redirect(request, user, request.route_path("home"))


def sign_out(request: Request) -> Response:
    response = HTTPFound(request.route_path("page.sign_in", _query={"signed": "out"}))
    end_current_session(request, response)
    return response


LINK_PURPOSES = {"magic": (TokenPurpose.magic_link,),
                 "reset": (TokenPurpose.password_reset, TokenPurpose.invitation)}


def emailed_link_page(purpose: str):
    def view(request: Request) -> dict[str, Any]:
        token = request.GET.get("token", "")
        token = token if isinstance(token, str) and len(token) <= 200 else ""
        if token and not token_is_live(request.dbsession, token, LINK_PURPOSES[purpose]):
            # Used, expired, or superseded by "Send the invitation again".
            return {"purpose": purpose, "token": "", "expired": True, "errors": {}}
        return {"purpose": purpose, "token": token, "errors": {}}
    return view


def use_magic_link(request: Request) -> Any:
    token = request.POST.get("token", "")
    try:
        user = signin.sign_in_with_link(request, token if isinstance(token, str) else "")
    except APIError:
        request.response.status = 400
        return {"purpose": "magic", "token": "", "expired": True, "errors": {}}
    return signed_in_redirect(request, user, request.route_path("home"))


def use_reset_link(request: Request) -> Any:
    values = json_values(request.POST, {"token": TEXT, "newPassword": TEXT})
    if request.POST.get("newPassword") != request.POST.get("confirmPassword"):
        request.response.status = 400
        return {"purpose": "reset", "token": values.get("token", ""),
                "errors": {"confirmPassword": request.localizer.translate("The two passwords differ")}}
    try:
        data = ResetConfirmSchema().deserialize(values)
        user = signin.set_password_with_link(request, data["token"], data["newPassword"])
    except colander.Invalid as exc:
        request.response.status = 400
        errors = errors_of(exc)
        if "token" in errors:
            return {"purpose": "reset", "token": "", "expired": True, "errors": {}}
        return {"purpose": "reset", "token": values.get("token", ""), "errors": errors}
    except APIError:
        request.response.status = 400
        return {"purpose": "reset", "token": "", "expired": True, "errors": {}}
    return signed_in_redirect(request, user, request.route_path("home"))


def send_reset_link(request: Request) -> Any:
    """"Send me a new link" on an expired reset or invitation link."""
    values = json_values(request.POST, {"email": TEXT})
    try:
        data = EmailSchema().deserialize(values)
    except colander.Invalid as exc:
        request.response.status = 400
        return {"purpose": "reset", "token": "", "expired": True, "errors": errors_of(exc),
                "email": values.get("email", "")}
    signin.send_link(request, TokenPurpose.password_reset, data["email"])
    return {"purpose": "reset", "token": "", "expired": True, "errors": {}, "resent": True}


def account(request: Request) -> dict[str, Any]:
    return {"errors": {}, "user": request.identity.user, "optional_mail": OPTIONAL_MAIL}


def change_language(request: Request) -> Any:
    """A person's language for pages and mail (issue #39): a shipped locale,
    or empty for the organization's default; the same schema and service
    as `PATCH /api/auth/me`. Any other name is refused."""
    user = request.identity.user
    value = request.POST.get("locale", "")
    try:
        data = OwnSettingsSchema().deserialize({"locale": value or None})
    except colander.Invalid:
        raise HTTPBadRequest() from None
    update_user(request, user.id, data)
    return HTTPFound(request.route_path("page.account", _query={"notice": "saved"}, _anchor="language-title"))


def mail_choices(request: Request) -> Any:
    """The follow-up mails this person gets: the ticked kinds stay on."""
    user = request.identity.user
    kept = set(request.POST.getall("on"))
    set_mail_off(user, [kind for kind in OPTIONAL_MAIL if kind not in kept])
    return HTTPFound(request.route_path("page.account", _query={"notice": "saved"}, _anchor="mail-title"))


def change_password(request: Request) -> Any:
    user = request.identity.user
    values = json_values(request.POST, {"currentPassword": TEXT, "newPassword": TEXT})
    page = {"user": user, "optional_mail": OPTIONAL_MAIL}
    if request.POST.get("newPassword") != request.POST.get("confirmPassword"):
        request.response.status = 400
        return page | {"errors": {"confirmPassword": request.localizer.translate("The two passwords differ")}}
    try:
        data = PasswordChangeSchema().deserialize(values)
        signin.change_password(request, user, data["currentPassword"], data["newPassword"])
    except colander.Invalid as exc:
        request.response.status = 400
        return page | {"errors": errors_of(exc)}
    except signin.Refusal as refusal:
        request.response.status = refusal.status
        request.response.headers.update(refusal.headers)
        errors = errors_of(APIError(refusal.status, refusal.message, refusal.issues))
        return page | {"errors": errors}
    response = HTTPFound(request.route_path("page.account", _query={"notice": "password-changed"}))
    start_session(request, response, user)
    return response


def rename(request: Request) -> Any:
    """A person's own name, as people see it on incidents, actions and
    mail; the same operation and schema as an admin's rename."""
    user = request.identity.user
    try:
        data = UserUpdateSchema().deserialize(json_values(request.POST, {"name": TEXT}))
        if "name" not in data:
            raise colander.Invalid(UserUpdateSchema()["name"], "Required")
        update_user(request, user.id, {"name": data["name"]})
    except colander.Invalid as exc:
        request.response.status = 400
        return {"user": user, "errors": {}, "name_errors": errors_of(exc),
                "name_value": request.POST.get("name", ""), "optional_mail": OPTIONAL_MAIL}
    return HTTPFound(request.route_path("page.account", _query={"notice": "saved"}))


def sign_out_everywhere(request: Request) -> Response:
    """Ends every session of this person, this one too (a lost phone, a
    shared computer): ASVS 5 7.4.4, the user can end all their sessions."""
    response = HTTPFound(request.route_path("page.sign_in", _query={"signed": "out"}))
    end_user_sessions(request, request.identity.user_id)
    end_current_session(request, response)
    return response


def includeme(config: Configurator) -> None:
    config.add_route("page.sign_in", "/sign-in")
    config.add_route("page.sign_in_link", "/sign-in/link")
    config.add_route("page.sign_out", "/sign-out")
    config.add_request_method(company_sign_in, "company_sign_in", reify=True)
    writes_on_get(config, "/sign-in/oidc", oidc.CALLBACK_PATH)  # on PostgreSQL too
    config.add_route("page.oidc_start", "/sign-in/oidc")
    config.add_route("page.oidc_callback", oidc.CALLBACK_PATH)
    config.add_view(start_company_sign_in, route_name="page.oidc_start", request_method="GET",
                    renderer="ehs_core:templates/auth/sign_in.html", permission=PUBLIC)
    config.add_view(company_sign_in_callback, route_name="page.oidc_callback", request_method="GET",
                    renderer="ehs_core:templates/auth/sign_in.html", permission=PUBLIC)
    config.add_route("page.setup", "/setup")
    config.add_route("page.magic", "/auth/magic")
    config.add_route("page.reset", "/auth/reset")
    config.add_route("page.reset_resend", "/auth/reset/new-link")
    config.add_route("page.account", "/account")
    config.add_route("page.password", "/account/password")
    config.add_route("page.account_name", "/account/name")
    config.add_route("page.account_mail", "/account/mail")
    config.add_route("page.account_language", "/account/language")
    config.add_route("page.sign_out_everywhere", "/account/sign-out-everywhere")
    config.add_view(rename, route_name="page.account_name", request_method="POST",
                    renderer="ehs_core:templates/auth/account.html", permission=Permission.signed_in)
    config.add_view(sign_out_everywhere, route_name="page.sign_out_everywhere", request_method="POST",
                    permission=Permission.signed_in)
    view = config.add_view
    view(sign_in_form, route_name="page.sign_in", request_method="GET",
         renderer="ehs_core:templates/auth/sign_in.html", permission=PUBLIC)
    view(sign_in, route_name="page.sign_in", request_method="POST",
         renderer="ehs_core:templates/auth/sign_in.html", permission=PUBLIC)
    view(send_sign_in_link, route_name="page.sign_in_link", request_method="POST",
         renderer="ehs_core:templates/auth/sign_in.html", permission=PUBLIC)
    view(sign_out, route_name="page.sign_out", request_method="POST", permission=PUBLIC)
    view(setup_form, route_name="page.setup", request_method="GET",
         renderer="ehs_core:templates/auth/setup.html", permission=PUBLIC)
    view(setup, route_name="page.setup", request_method="POST", renderer="ehs_core:templates/auth/setup.html",
         permission=PUBLIC)
    view(emailed_link_page("magic"), route_name="page.magic", request_method="GET",
         renderer="ehs_core:templates/auth/emailed_link.html", permission=PUBLIC)
    view(use_magic_link, route_name="page.magic", request_method="POST",
         renderer="ehs_core:templates/auth/emailed_link.html", permission=PUBLIC)
    view(emailed_link_page("reset"), route_name="page.reset", request_method="GET",
         renderer="ehs_core:templates/auth/emailed_link.html", permission=PUBLIC)
    view(use_reset_link, route_name="page.reset", request_method="POST",
         renderer="ehs_core:templates/auth/emailed_link.html", permission=PUBLIC)
    view(send_reset_link, route_name="page.reset_resend", request_method="POST",
         renderer="ehs_core:templates/auth/emailed_link.html", permission=PUBLIC)
    view(mail_choices, route_name="page.account_mail", request_method="POST", permission=Permission.signed_in)
    view(change_language, route_name="page.account_language", request_method="POST",
         permission=Permission.signed_in)
    view(account, route_name="page.account", request_method="GET",
         renderer="ehs_core:templates/auth/account.html", permission=Permission.signed_in)
    view(change_password, route_name="page.password", request_method="POST",
         renderer="ehs_core:templates/auth/account.html", permission=Permission.signed_in)
