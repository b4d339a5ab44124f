"""The follow-up of a report filed without a name (issue #39 item 3): the
one place its rules live, for the JSON API, the pages and the kiosk plugin.

- A report filed without a reporter's name (an anonymous report, or a
  reporting link's report without `reporterName`) gets a follow-up code:
  `secrets.token_urlsafe(24)`, 192 bits from the operating system's CSPRNG
  (ASVS 4.0 V3.2.2 / V2.6.2: at least 128 bits of entropy for a secret
  that stands for a session). The code is shown once, in the answer that
  files the report, and only its SHA-256 is stored (ASVS V2.10/V3.5:
  verifiers of secrets are not kept in clear; a slow password hash adds
  nothing to a 192-bit random value, whose hash cannot be searched).
- With the code alone the reporter reads the report's status and the
  thread, and answers; the team (supervisor and above) writes to them on
  the incident. Nothing of the reporter is stored: no user, address,
  device or browser detail with the code or their messages.
- Wrong codes are counted per client address (`ratelimit`, the address
  kept only as a hash in the limit's key, for at most an hour); past
  `WRONG_CODES` within the window every code from that address, the right
  one too, answers 429 with Retry-After (ASVS V2.2.1, anti-automation).
- The code stops working once the incident has been closed for
  `EXPIRES_AFTER` (90 days): 404 saying so (`Ended`), not counted as a guess.

Operations follow the convention of `incidents.filing`: the request is the
unit of work, refusals are the domain errors of `ehs_core.errors`, and a
refusal that counted a wrong code must be answered (not raised) so that
the count commits.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets
from dataclasses import dataclass
from typing import Any

from pyramid.request import Request
from sqlalchemy import select

from ehs_core.auth import ratelimit
from ehs_core.db import utcnow
from ehs_core.errors import Conflict, Invalid, NotFound, TooMany
from ehs_core.events import actor, publish
from ehs_core.followup.events import FollowUpMessageAdded
from ehs_core.followup.models import FROM_REPORTER, TO_REPORTER, FollowUpCode, FollowUpMessage
from ehs_core.incidents.models import Incident, Status
from ehs_core.incidents.serialize import person, user_names
from ehs_core.serialize import iso

CODE_BYTES = 24  # 192 bits; at least 128 (issue #39 item 3)
#: A code as `secrets.token_urlsafe` writes it; anything else is wrong
#: without a look-up (but counted as wrong all the same).
CODE_SHAPE = re.compile(r"^[A-Za-z0-9_-]{22,100}$")
EXPIRES_AFTER = dt.timedelta(days=90)
WRONG_CODES = ratelimit.Limit("follow-up-client", 10, dt.timedelta(minutes=15))


class Ended(NotFound):
    """A code that worked once and no longer does (the incident has been
    closed for more than 90 days): 404 like a wrong code, as nothing is
    there any more, but in its own words and not counted as a guess."""


WRONG = "No report has this follow-up code. Check the code you were given when you reported."
EXPIRED = ("This follow-up has ended: the report was closed more than 90 days ago. "
           "File a new report if there is more to say.")
NO_CODE = "This report has no follow-up: only a report filed without a name has one"


def code_hash(code: str) -> str:
    """The stored form of a code: SHA-256, hex."""
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


def issue_code(request: Request, incident: Incident) -> str:
    """A new code for a report filed without a name, returned to be shown
    once; the report keeps only its hash."""
    code = secrets.token_urlsafe(CODE_BYTES)
    request.dbsession.add(FollowUpCode(incident_id=incident.id, code_hash=code_hash(code),
                                       created_at=utcnow()))
    request.dbsession.flush()
    return code


def follow_up_url(request: Request, code: str) -> str:
    """The reporter's page on the service's public address (what the
    answer's link and QR code lead to)."""
    return f"{request.registry.settings['ehs.public_url']}/f/{code}"


def has_follow_up(request: Request, incident_id: int) -> bool:
    """Whether the report was given a code (filed without a name)."""
    return request.dbsession.get(FollowUpCode, incident_id) is not None


def expired(incident: Any, now: dt.datetime | None = None) -> bool:
    """Closed for more than 90 days (a reopened report has no `closed_at`)."""
    return (incident.status == Status.closed and incident.closed_at is not None
            and incident.closed_at <= (now or utcnow()) - EXPIRES_AFTER)


def _client(request: Request) -> str:
    # The address is needed for the limit only; its key keeps a hash of it.
    return hashlib.sha256(ratelimit.client_address(request).encode()).hexdigest()[:32]


def incident_for_code(request: Request, code: str) -> Incident:
    """The report this code follows up, or a refusal: TooMany while the
    caller's address has given too many wrong codes (checked first, so a
    right code is refused too), NotFound for a wrong code (counted), Ended
    once the report has been closed for more than 90 days (404 in its own words)."""
    dbsession = request.dbsession
    client = _client(request)
    wait = ratelimit.waiting(dbsession, WRONG_CODES, client)
    if wait is not None:
        raise TooMany("Too many wrong follow-up codes from this network; try again later",
                      headers={"Retry-After": str(max(1, int(wait.total_seconds()) + 1))})
    found = None
    if CODE_SHAPE.match(code):
        found = dbsession.execute(select(FollowUpCode.incident_id)
                                  .where(FollowUpCode.code_hash == code_hash(code))).scalar()
    incident = dbsession.get(Incident, found) if found is not None else None
    if incident is None:
        ratelimit.failed(dbsession, WRONG_CODES, client)
        raise NotFound(WRONG)
    if expired(incident):
        raise Ended(EXPIRED)
    return incident


def thread(request: Request, incident_id: int) -> list[FollowUpMessage]:
    """The report's messages, oldest first."""
    return list(request.dbsession.execute(
        select(FollowUpMessage).where(FollowUpMessage.incident_id == incident_id)
        .order_by(FollowUpMessage.created_at, FollowUpMessage.id)).scalars())


def _body(body: str) -> str:
    if not body.strip():
        raise Invalid("body", "Must not be empty")
    return body


def _add(request: Request, incident: Incident, direction: str, body: str,
         author_id: int | None) -> FollowUpMessage:
    message = FollowUpMessage(incident_id=incident.id, direction=direction, body=_body(body),
                              author_id=author_id, created_at=utcnow())
    request.dbsession.add(message)
    request.dbsession.flush()
    publish(request, FollowUpMessageAdded(request, incident=incident, message=message, actor_id=author_id))
    return message


def write_to_reporter(request: Request, incident: Incident, body: str) -> FollowUpMessage:
    """The team's message to the reporter (the caller holds `follow_up` on
    the incident: supervisor and above). Refused (409) on a report that has
    no code, and once its code has stopped working: the reporter could not
    read it."""
    if not has_follow_up(request, incident.id):
        raise Conflict(NO_CODE)
    if expired(incident):
        raise Conflict("The follow-up of this report has ended: it was closed more than 90 days ago")
    return _add(request, incident, TO_REPORTER, body, actor(request))


def answer_team(request: Request, incident: Incident, body: str) -> FollowUpMessage:
    """The reporter's answer, by code (`incident_for_code`): recorded with
    no author and nothing about who sent it."""
    return _add(request, incident, FROM_REPORTER, body, None)


# --- how each side reads the thread ----------------------------------------------------------


def reporter_message_json(message: FollowUpMessage) -> dict[str, Any]:
    """A message as the reporter reads it: from the safety team (no name) or
    from themselves."""
    return {"id": message.id, "from": "team" if message.direction == TO_REPORTER else "you",
            "body": message.body, "createdAt": iso(message.created_at)}


def reporter_json(request: Request, incident: Incident) -> dict[str, Any]:
    """What the code shows: the report's reference, title and status (and
    when it was closed), and the thread."""
    return {"reference": incident.reference, "title": incident.title, "status": incident.status,
            "closedAt": iso(incident.closed_at),
            "messages": [reporter_message_json(m) for m in thread(request, incident.id)]}


@dataclass(frozen=True)
class TeamThread:
    """The thread as the team reads it on the incident."""

    messages: list[FollowUpMessage]
    names: dict[int, str]
    ended: bool


def team_thread(request: Request, incident: Any) -> TeamThread:
    messages = thread(request, incident.id)
    return TeamThread(messages, user_names(request, {m.author_id for m in messages}), expired(incident))


def team_message_json(message: FollowUpMessage, names: dict[int, str]) -> dict[str, Any]:
    return {"id": message.id,
            "direction": "toReporter" if message.direction == TO_REPORTER else "fromReporter",
            "body": message.body, "createdAt": iso(message.created_at),
            "author": person(names, message.author_id)}


def team_json(request: Request, incident: Any) -> dict[str, Any]:
    """The thread on a report that has a follow-up (else 409, as for writing)."""
    if not has_follow_up(request, incident.id):
        raise Conflict(NO_CODE)
    found = team_thread(request, incident)
    return {"ended": found.ended, "messages": [team_message_json(m, found.names) for m in found.messages]}
