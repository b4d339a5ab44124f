"""Outgoing mail: rendered in the request from templates, written as a job
row (`ehs_core.jobs`, the outbox) in the transaction of what caused it,
and delivered over SMTP by the job runners. If the SMTP server is
unreachable the job is retried with back-off and each failure is logged
with the recipient; the request that caused the mail never fails because
of it. Each mail's Message-ID is fixed when its row is written, so a mail
sent again after a runner was killed mid-send is recognisable as the same.

A mail that can never be delivered (the server refuses it with a 5xx answer,
it cannot be built, or every retry failed) is not retried blindly: it is
logged as an error with its recipient and kept in `failed_mail`, which
admins read in the detail of `GET /api/health`.

Every mail has an HTML part beside its plain text: a template
"pkg:templates/name.txt" may have a sibling "name.html", a Jinja2 template
(autoescaped, so a name typed by a person stays text) rendered with the same
values; it may extend "ehs_core.mail:templates/base.html".

Header values come from people (an incident title, a user's or the
organization's name, typed on a kiosk): line breaks and other control
characters in them become spaces where the mail is built, so no header can
be injected and the notice still goes out with the whole text.

Mail goes in its recipient's language (issue #39): a template
"pkg:templates/name.txt" has a sibling "name.<locale>.txt" (and
".<locale>.html") for each other shipped locale; `send_mail` renders once
per language among its recipients (a user's chosen locale, the default
when they chose none; an address of no user gets the request's). Values
that are words rather than data are `Localized` (or Pyramid translation
strings) and are written in each rendering's language, as are dates and
numbers (`ehs_core.ui.rendering.in_locale`)."""

from __future__ import annotations

import logging
import smtplib
import string
import unicodedata
from collections.abc import Callable, Iterable
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from importlib.resources import files
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, FunctionLoader, StrictUndefined, select_autoescape
from pyramid.config import Configurator
from pyramid.i18n import Localizer, TranslationString, TranslationStringFactory
from pyramid.registry import Registry
from pyramid.request import Request
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ehs_core.directives import register_once
from ehs_core.jobs import Permanent, enqueue, queue_jobs
from ehs_core.mail.models import FailedMail

log = logging.getLogger(__name__)

DELIVER_JOB = "mail.deliver"


def _source(spec: str) -> str | None:
    package, _, path = spec.partition(":")
    resource = files(package).joinpath(path)
    return resource.read_text(encoding="utf-8") if resource.is_file() else None


# HTML parts: templates named by asset spec, autoescaped, a missing value an
# error rather than a blank in someone's mail.
HTML = Environment(loader=FunctionLoader(_source), autoescape=select_autoescape(default=True),
                   undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def add_mail_template(config: Configurator, name: str, spec: str) -> None:
    """Directive: a plain-text template "package:path". Its first line is
    `Subject: …`, then a blank line, then the body; `$name` placeholders.
    The HTML part is the sibling ".html" template when there is one. The
    template in another language is the sibling "name.<locale>.txt" (and
    ".<locale>.html"), e.g. "invitation.es.txt"."""

    def load(text_spec: str) -> tuple[string.Template, string.Template, Any] | None:
        source = _source(text_spec)
        if source is None:
            return None
        head, _, body = source.partition("\n\n")
        if not head.startswith("Subject: "):
            raise ValueError(f"mail template {text_spec} must start with 'Subject: '")
        html_spec = text_spec.rsplit(".", 1)[0] + ".html"
        html = HTML.get_template(html_spec) if _source(html_spec) is not None else None
        return (string.Template(head[len("Subject: "):].strip()), string.Template(body), html)

    def register() -> None:
        from ehs_core.ui import SHIPPED_LOCALES

        default = load(spec)
        if default is None:
            raise ValueError(f"mail template {spec} not found")
        stem = spec.rsplit(".", 1)[0]
        templates = config.registry.setdefault("mail_templates", {})
        templates[name] = default
        translated = config.registry.setdefault("mail_templates_by_locale", {})
        for locale in sorted(SHIPPED_LOCALES):
            variant = load(f"{stem}.{locale}.txt")
            if variant is not None:
                translated[(name, locale)] = variant

    register_once(config, "ehs.mail_template", name, register)


# Words of the core's mail values, translated in each rendering's language.
translate = TranslationStringFactory("ehs")


def label_word(value: str) -> TranslationString:
    """An enumeration value's words (`ehs_core.ui.labels`), to be translated
    in each rendering's language: "near_miss" -> "Near miss"."""
    from ehs_core.ui.labels import LABELS

    return TranslationString(LABELS.get(value) or value.replace("_", " ").capitalize(), domain="ehs")


class Localized:
    """A mail value in words, written in each rendering's language: the
    function gets the Localizer of the recipients' locale (dates and numbers
    it writes follow that locale too)."""

    def __init__(self, write: Callable[[Localizer], str]) -> None:
        self.write = write


def default_locale(registry: Registry) -> str:
    return registry.settings.get("pyramid.default_locale_name") or "en"


def localizer_for(registry: Registry, locale: str) -> Localizer:
    """The localizer of a shipped locale outside a request (as a request's)."""
    from ehs_core.ui import localizer_of

    return localizer_of(registry, locale)


def recipient_locales(dbsession: Session, registry: Registry, addresses: Iterable[str],
                      fallback: str | None = None) -> dict[str, str]:
    """Each address's language: its user's chosen locale, the default when
    they chose none; an address of no user gets `fallback` (the request's
    locale) or the default."""
    from ehs_core.ui import shipped
    from ehs_core.users.models import User, normalize_email

    addresses = list(addresses)
    default = default_locale(registry)
    chosen = dict(dbsession.execute(select(User.email, User.locale).where(
        User.email.in_([normalize_email(a) for a in addresses]))).all()) if addresses else {}
    return {address: (shipped(chosen[normalize_email(address)]) or default)
            if normalize_email(address) in chosen else (shipped(fallback) or default)
            for address in addresses}


def header_safe(value: str) -> str:
    """One line of text for a header: control characters (CR, LF, tab, NUL,
    ...) become spaces and runs of spaces one, so nothing is injected and no
    word is lost (RFC 5322 2.2: a header body holds no bare CR or LF)."""
    cleaned = "".join(" " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in value)
    return " ".join(cleaned.split())


def render(registry: Registry, template: str, /, *, locale: str | None = None,
           **context: Any) -> dict[str, str]:
    """The message's subject, plain text and (when the template has one)
    HTML, from the same values, in `locale` (default: the installation's)."""
    from ehs_core.ui.rendering import in_locale

    locale = locale or default_locale(registry)
    subject, body, html = registry.get("mail_templates_by_locale", {}).get(
        (template, locale), registry["mail_templates"][template])
    # The HTML part links to the site; plugins that render a template
    # themselves need not know it.
    context.setdefault("public_url", registry.settings.get("ehs.public_url", ""))
    with in_locale(locale):
        if any(isinstance(value, (Localized, TranslationString)) for value in context.values()):
            localizer = localizer_for(registry, locale)
            context = {key: value.write(localizer) if isinstance(value, Localized)
                       else localizer.translate(value) if isinstance(value, TranslationString) else value
                       for key, value in context.items()}
        message = {"subject": header_safe(subject.substitute(context)), "body": body.substitute(context)}
        if html is not None:
            message["html"] = html.render(subject=message["subject"], lang=locale, **context)
    return message


def send_mail(request: Request, to: str | Iterable[str], template: str, /, **context: Any) -> None:
    """Render now, deliver after commit. `to` is one address, or several
    that get the same message (rendered once per language among them:
    `recipient_locales`), each its own mail and its own delivery job."""
    recipients = [to] if isinstance(to, str) else list(to)
    if not recipients:
        return
    context.setdefault("public_url", request.registry.settings["ehs.public_url"])
    locales = recipient_locales(request.dbsession, request.registry, recipients,
                                fallback=request.localizer.locale_name)
    messages: dict[str, dict[str, str]] = {}
    for recipient in recipients:
        locale = locales[recipient]
        if locale not in messages:
            messages[locale] = render(request.registry, template, locale=locale, **context)
    queue_jobs(request, DELIVER_JOB, [(addressed(request.registry, recipient, messages[locales[recipient]]),)
                                      for recipient in recipients])


def addressed(registry: Registry, recipient: str, message: dict[str, str]) -> dict[str, str]:
    """One recipient's mail, with the Message-ID it keeps through every
    attempt (RFC 5322 3.6.4)."""
    host = urlsplit(registry.settings.get("ehs.public_url", "")).hostname or "ehs.local"
    return {"to": recipient, **message, "messageId": make_msgid(domain=host)}


def queue_mail(dbsession: Session, registry: Registry, recipient: str, message: dict[str, str],
               key: str | None = None) -> None:
    """Queue a mail in `dbsession`'s transaction outside a request (a
    periodic job's); `key` makes it once only (see `jobs.enqueue`)."""
    enqueue(dbsession, DELIVER_JOB, addressed(registry, recipient, message), key=key)


def build(settings: dict[str, Any], message: dict[str, str]) -> EmailMessage:
    """The message to send; raises ValueError if it cannot be built (a
    recipient address that is not one)."""
    email = EmailMessage()
    email["From"] = settings["mail.default_sender"]
    email["To"] = header_safe(message["to"])
    email["Subject"] = header_safe(message["subject"])
    email["Date"] = formatdate(localtime=False)
    email["Message-ID"] = message.get("messageId") or make_msgid(domain="ehs.local")
    email.set_content(message["body"])
    if message.get("html"):
        email.add_alternative(message["html"], subtype="html")
    return email


def refused_for_good(exc: Exception) -> bool:
    """A 5xx answer is final (RFC 5321 4.2.1); 4xx and broken connections
    are worth a retry."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        return all(code >= 500 for code, _ in exc.recipients.values())
    return isinstance(exc, smtplib.SMTPResponseException) and exc.smtp_code >= 500


def record_failure(dbsession: Session, registry: Registry, args: list[Any], error: str,
                   attempts: int) -> None:
    """The delivery job's `on_failure`: keep a mail that will not be
    delivered for admins (`failed_mail`), in the transaction that marks
    its job failed."""
    message = args[0] if args and isinstance(args[0], dict) else {}
    log.error("mail to %s failed for good after %d attempt(s) (%s): %s",
              message.get("to"), attempts, error, message.get("subject"))
    dbsession.add(FailedMail(recipient=str(message.get("to", ""))[:320],
                             subject=header_safe(str(message.get("subject", ""))),
                             error=error[:1000], attempts=attempts))


def deliver(registry: Registry, message: dict[str, str]) -> None:
    """Send one mail. Raises `Permanent` when it can never be delivered
    (it cannot be built, or the server refuses it with a 5xx answer), and
    the error itself when a retry may help."""
    settings = registry.settings
    try:
        email = build(settings, message)
    except (ValueError, TypeError) as exc:
        raise Permanent(f"could not be built: {exc}") from exc
    try:
        with smtplib.SMTP(settings["mail.host"], settings["mail.port"], timeout=15) as smtp:
            smtp.send_message(email)
    except (OSError, smtplib.SMTPException) as exc:
        if refused_for_good(exc):
            raise Permanent(f"{exc.__class__.__name__}: {exc}") from exc
        log.warning("mail to %s not delivered (%s); will retry", message["to"], exc)
        raise
    log.info("mail delivered to %s: %s (%s)", message["to"], message["subject"], email["Message-ID"])


def envelope(args: list[Any]) -> list[Any]:
    """What a sent or failed mail's job row keeps: who, what and its
    Message-ID, never the body (a sign-in link's token)."""
    message = args[0] if args and isinstance(args[0], dict) else {}
    return [{key: message[key] for key in ("to", "subject", "messageId") if key in message}]


def failed_mail(dbsession: Any, limit: int = 20) -> dict[str, Any]:
    """What admins see of lost mail: how many, and the latest."""
    count = dbsession.execute(select(func.count()).select_from(FailedMail)).scalar_one()
    latest = dbsession.execute(select(FailedMail).order_by(FailedMail.failed_at.desc(), FailedMail.id.desc())
                               .limit(limit)).scalars()
    return {"failed": count, "latest": [
        {"recipient": row.recipient, "subject": row.subject, "error": row.error, "attempts": row.attempts,
         "failedAt": row.failed_at.isoformat()} for row in latest]}


def includeme(config: Configurator) -> None:
    config.add_directive("add_mail_template", add_mail_template)
    settings = config.get_settings()
    config.add_job(DELIVER_JOB, deliver, retries=settings["ehs.mail_retries"],
                   retry_delay=settings["ehs.mail_retry_delay"], retry_backoff=2, on_failure=record_failure,
                   redact=envelope)
