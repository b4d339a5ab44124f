"""Outgoing mail: rendered in the request from templates, delivered over SMTP
by a job queued after commit. If the SMTP server is unreachable the job is
retried with back-off and each failure is logged with the recipient; the
request that caused the mail never fails because of it."""

from __future__ import annotations

import logging
import smtplib
import string
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from importlib.resources import files
from typing import Any

from pyramid.config import Configurator
from pyramid.registry import Registry
from pyramid.request import Request

from ehs_core.directives import register_once
from ehs_core.jobs import queue_job

log = logging.getLogger(__name__)

DELIVER_JOB = "mail.deliver"


def add_mail_template(config: Configurator, name: str, spec: str) -> None:
    """Directive: a plain-text template "package:path". Its first line is
    `Subject: …`, then a blank line, then the body; `$name` placeholders."""
    package, _, path = spec.partition(":")

    def register() -> None:
        source = files(package).joinpath(path).read_text(encoding="utf-8")
        head, _, body = source.partition("\n\n")
        if not head.startswith("Subject: "):
            raise ValueError(f"mail template {spec} must start with 'Subject: '")
        templates = config.registry.setdefault("mail_templates", {})
        templates[name] = (string.Template(head[len("Subject: "):].strip()), string.Template(body))

    register_once(config, "ehs.mail_template", name, register)


def render(registry: Registry, template: str, /, **context: Any) -> tuple[str, str]:
    subject, body = registry["mail_templates"][template]
    return subject.substitute(context), body.substitute(context)


def send_mail(request: Request, to: str, template: str, /, **context: Any) -> None:
    """Render now, deliver after commit."""
    context.setdefault("public_url", request.registry.settings["ehs.public_url"])
    subject, body = render(request.registry, template, **context)
    queue_job(request, DELIVER_JOB, {"to": to, "subject": subject, "body": body})


def deliver(registry: Registry, message: dict[str, str]) -> None:
    settings = registry.settings
    email = EmailMessage()
    email["From"] = settings["mail.default_sender"]
    email["To"] = message["to"]
    email["Subject"] = message["subject"]
    email["Date"] = formatdate(localtime=False)
    email["Message-ID"] = make_msgid(domain="ehs.local")
    email.set_content(message["body"])
    try:
        with smtplib.SMTP(settings["mail.host"], settings["mail.port"], timeout=15) as smtp:
            smtp.send_message(email)
    except (OSError, smtplib.SMTPException) as exc:
        log.warning("mail to %s not delivered (%s); will retry", message["to"], exc)
        raise
    log.info("mail delivered to %s: %s", message["to"], message["subject"])


def includeme(config: Configurator) -> None:
    config.add_directive("add_mail_template", add_mail_template)
    settings = config.get_settings()
    config.add_job(DELIVER_JOB, deliver, retries=settings["ehs.mail_retries"],
                   retry_delay=settings["ehs.mail_retry_delay"], retry_backoff=2)
