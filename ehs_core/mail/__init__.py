"""Outgoing mail: rendered in the request from templates, delivered over SMTP
by a job queued after commit. If the SMTP server is unreachable the job is
retried with back-off and each failure is logged with the recipient; the
request that caused the mail never fails because of it.

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
be injected and the notice still goes out with the whole text."""

from __future__ import annotations

import logging
import smtplib
import string
import unicodedata
from collections.abc import Iterable
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from importlib.resources import files
from typing import Any

from huey.signals import SIGNAL_ERROR
from jinja2 import Environment, FunctionLoader, StrictUndefined, select_autoescape
from pyramid.config import Configurator
from pyramid.registry import Registry
from pyramid.request import Request
from sqlalchemy import func, select

from ehs_core.directives import register_once
from ehs_core.jobs import queue_job
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
    The HTML part is the sibling ".html" template when there is one."""

    def register() -> None:
        source = _source(spec)
        if source is None:
            raise ValueError(f"mail template {spec} not found")
        head, _, body = source.partition("\n\n")
        if not head.startswith("Subject: "):
            raise ValueError(f"mail template {spec} must start with 'Subject: '")
        html_spec = spec.rsplit(".", 1)[0] + ".html"
        html = HTML.get_template(html_spec) if _source(html_spec) is not None else None
        templates = config.registry.setdefault("mail_templates", {})
        templates[name] = (string.Template(head[len("Subject: "):].strip()), string.Template(body), html)

    register_once(config, "ehs.mail_template", name, register)


def header_safe(value: str) -> str:
    """One line of text for a header: control characters (CR, LF, tab, NUL,
    ...) become spaces and runs of spaces one, so nothing is injected and no
    word is lost (RFC 5322 2.2: a header body holds no bare CR or LF)."""
    cleaned = "".join(" " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in value)
    return " ".join(cleaned.split())


def render(registry: Registry, template: str, /, **context: Any) -> dict[str, str]:
    """The message's subject, plain text and (when the template has one)
    HTML, from the same values."""
    subject, body, html = registry["mail_templates"][template]
    # The HTML part links to the site; plugins that render a template
    # themselves need not know it.
    context.setdefault("public_url", registry.settings.get("ehs.public_url", ""))
    message = {"subject": header_safe(subject.substitute(context)), "body": body.substitute(context)}
    if html is not None:
        message["html"] = html.render(subject=message["subject"], **context)
    return message


def send_mail(request: Request, to: str | Iterable[str], template: str, /, **context: Any) -> None:
    """Render now, deliver after commit. `to` is one address, or several
    that get the same message (rendered once), each its own mail and its
    own delivery job."""
    recipients = [to] if isinstance(to, str) else list(to)
    if not recipients:
        return
    context.setdefault("public_url", request.registry.settings["ehs.public_url"])
    message = render(request.registry, template, **context)
    for recipient in recipients:
        queue_job(request, DELIVER_JOB, {"to": recipient, **message})


def build(settings: dict[str, Any], message: dict[str, str]) -> EmailMessage:
    """The message to send; raises ValueError if it cannot be built (a
    recipient address that is not one)."""
    email = EmailMessage()
    email["From"] = settings["mail.default_sender"]
    email["To"] = header_safe(message["to"])
    email["Subject"] = header_safe(message["subject"])
    email["Date"] = formatdate(localtime=False)
    email["Message-ID"] = make_msgid(domain="ehs.local")
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


def record_failure(registry: Registry, message: dict[str, str], error: str, attempts: int = 1) -> None:
    """Log and keep a mail that will not be delivered."""
    log.error("mail to %s failed for good after %d attempt(s) (%s): %s",
              message.get("to"), attempts, error, message.get("subject"))
    try:
        with registry["dbsession_factory"]() as dbsession:
            dbsession.add(FailedMail(recipient=str(message.get("to", ""))[:320],
                                     subject=header_safe(str(message.get("subject", ""))),
                                     error=error[:1000], attempts=attempts))
            dbsession.commit()
    except Exception:
        log.exception("could not record the failed mail to %s", message.get("to"))


def deliver(registry: Registry, message: dict[str, str], *, last_attempt: bool = False) -> bool:
    """Send one mail. Returns True when the SMTP server took it, False when
    it failed for good (and was recorded); raises when a retry may help,
    unless this is the `last_attempt`."""
    settings = registry.settings
    try:
        email = build(settings, message)
    except (ValueError, TypeError) as exc:
        record_failure(registry, message, f"could not be built: {exc}")
        return False
    try:
        with smtplib.SMTP(settings["mail.host"], settings["mail.port"], timeout=15) as smtp:
            smtp.send_message(email)
    except (OSError, smtplib.SMTPException) as exc:
        if refused_for_good(exc) or last_attempt:
            record_failure(registry, message, f"{exc.__class__.__name__}: {exc}")
            return False
        log.warning("mail to %s not delivered (%s); will retry", message["to"], exc)
        raise
    log.info("mail delivered to %s: %s", message["to"], message["subject"])
    return True


def failed_mail(dbsession: Any, limit: int = 20) -> dict[str, Any]:
    """What admins see of lost mail: how many, and the latest."""
    count = dbsession.execute(select(func.count()).select_from(FailedMail)).scalar_one()
    latest = dbsession.execute(select(FailedMail).order_by(FailedMail.failed_at.desc(), FailedMail.id.desc())
                               .limit(limit)).scalars()
    return {"failed": count, "latest": [
        {"recipient": row.recipient, "subject": row.subject, "error": row.error, "attempts": row.attempts,
         "failedAt": row.failed_at.isoformat()} for row in latest]}


def _retries_exhausted(registry: Registry) -> Any:
    """huey signal handler: a delivery job that raised with no retry left is
    failed for good (huey would drop it silently)."""
    attempts = registry.settings["ehs.mail_retries"] + 1

    def handler(signal: str, task: Any, exc: Exception | None = None) -> None:
        if task.name == DELIVER_JOB and not task.retries and task.args:
            record_failure(registry, task.args[0], f"{exc.__class__.__name__}: {exc}", attempts)

    return handler


def includeme(config: Configurator) -> None:
    config.add_directive("add_mail_template", add_mail_template)
    settings = config.get_settings()
    config.add_job(DELIVER_JOB, deliver, retries=settings["ehs.mail_retries"],
                   retry_delay=settings["ehs.mail_retry_delay"], retry_backoff=2)
    config.registry["huey"].signal(SIGNAL_ERROR)(_retries_exhausted(config.registry))
