"""Fuzz every operation of the published API description with schemathesis,
signed in as an admin and as a reporter, with valid and with invalid data
(negative mode): no 5xx, every response conforms to the document (status
codes, content types, schemas, headers), invalid data is refused, undeclared
methods answer 405 with Allow, and no operation that needs a session answers
without one (the session is schemathesis' own auth, so its `ignored_auth`
check drops it and sends a forged one). The reporting link's operations
(`/api/kiosk/`, the multipart report among them) get a link's
`X-Kiosk-Token` instead, dropped and forged alike.

Bounded by EHS_FUZZ_EXAMPLES (examples per operation and mode, default 8) so
CI stays fast. Valid-looking data may still be refused by business rules (a
site id that does not exist, an area of another site, the last admin), so
"positive data acceptance" is not asserted; every other default check is.
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import positive_data_acceptance

from ehs_core.auth.models import UserSession
from ehs_core.auth.tokens import digest, new_secret
from ehs_core.testing import PUBLIC_URL

EXAMPLES = int(os.environ.get("EHS_FUZZ_EXAMPLES", "8"))


def session_minter(dbsession, user_id: int):
    """Sessions of one user, one per call."""

    def mint() -> dict[str, str]:
        token = new_secret()
        dbsession.add(UserSession(token_hash=digest(token), user_id=user_id))
        dbsession.flush()
        return {"service_session": token}

    return mint


@pytest.fixture
def seeded(admin):
    """Some data for the fuzzer to aim at (ids 1 exist)."""
    site = admin.post_json("/api/sites", {"name": "Fuzz plant"}).json
    admin.post_json(f"/api/sites/{site['id']}/areas", {"name": "Line 1"})
    admin.post_json("/api/incidents", {"title": "Seed", "type": "hazard", "severity": "low",
                                       "occurredAt": "2026-01-05T08:00:00+01:00", "siteId": site["id"]})
    return admin


@pytest.fixture
def kiosk_token(seeded):
    return seeded.post_json("/api/kiosks", {"name": "Fuzz gate"}).json["token"]


@pytest.fixture
def admin_session(seeded, dbsession):
    return session_minter(dbsession, seeded.get("/api/auth/me").json["user"]["id"])


@pytest.fixture
def reporter_session(seeded, make_user, dbsession):
    return session_minter(dbsession, make_user("reporter").user["id"])


FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])


def fuzz(registry, mint, kiosk_token: str) -> list[str]:
    """Run every operation in both modes; return one line per failing operation."""
    api = schemathesis.openapi.from_wsgi("/api/openapi.json", registry["wsgi_app"])

    class Session:
        """A fresh session per example (examples log out, change passwords
        and deactivate users, which would end a shared one)."""

        def get(self, case, ctx):
            return mint()["service_session"]

        def set(self, case, data, ctx):
            case.cookies = dict(case.cookies or {}) | {"service_session": data}

    class KioskToken:
        """A reporting link's token, for the link's own operations."""

        def get(self, case, ctx):
            return kiosk_token

        def set(self, case, data, ctx):
            case.headers = dict(case.headers or {}) | {"X-Kiosk-Token": data}

    api.auth(refresh_interval=None).skip_for(path_regex="^/api/kiosk/")(Session)
    api.auth(refresh_interval=None).apply_to(path_regex="^/api/kiosk/")(KioskToken)
    # Negative examples get the body and parameters wrong, not the session
    # (ignored_auth drops and forges that one).
    api.config.generation.update(with_security_parameters=False)
    failures = []
    operations = [result.ok() for result in api.get_all_operations()]
    assert len(operations) > 50
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @FUZZ
            def run(case):
                case.call_and_validate(headers={"Origin": PUBLIC_URL},
                                       excluded_checks=[positive_data_acceptance])

            try:
                run()
            except Unsatisfiable:
                assert mode is GenerationMode.NEGATIVE  # nothing to get wrong: no body, no parameters
            except Exception as exc:  # collect them all, then fail once with the list
                failures.append(f"{operation.label} ({mode.value}): "
                                f"{str(exc).strip().splitlines()[0][:300]}")
    return failures


def test_api_as_admin_conforms_and_never_fails(registry, admin_session, kiosk_token):
    assert fuzz(registry, admin_session, kiosk_token) == []


def test_api_as_reporter_conforms_and_never_fails(registry, reporter_session, kiosk_token):
    assert fuzz(registry, reporter_session, kiosk_token) == []

