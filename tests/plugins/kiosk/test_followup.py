"""A reporting link's report without a name answers `{reference,
failedFiles, followUpCode}` (issue #39 item 3); the code follows the
report up through the core's endpoints; a report with a name, and a retry,
get no code."""

from __future__ import annotations

import hashlib
import uuid

import pytest
from sqlalchemy import select

from ehs_core.followup.models import FollowUpCode
from tests.plugins.kiosk.support import file_report, new_link, new_site, report_body


@pytest.fixture
def site(admin) -> int:
    return new_site(admin)


@pytest.fixture
def token(admin) -> str:
    return new_link(admin, "Gate tablet")["token"]


def test_a_report_without_a_name_answers_with_its_follow_up_code(admin, client, supervisor, site, token,
                                                                  dbsession):
    answer = file_report(client, token, report_body(site), status=201).json
    assert set(answer) == {"reference", "failedFiles", "followUpCode"}
    code = answer["followUpCode"]
    assert len(code) >= 32
    assert dbsession.execute(select(FollowUpCode.code_hash)).scalars().all() == [
        hashlib.sha256(code.encode()).hexdigest()]
    supervisor.post_json("/api/incidents/1/follow-up-messages", {"body": "Which gate?"}, status=201)
    view = client.get(f"/api/follow-up/{code}", status=200).json
    assert view["reference"] == answer["reference"] == "INC-0001"
    assert [m["body"] for m in view["messages"]] == ["Which gate?"]


def test_a_report_with_a_name_gets_no_code(client, supervisor, site, token, dbsession):
    answer = file_report(client, token, report_body(site, reporterName="Pat Doe"), status=201).json
    assert answer == {"reference": "INC-0001", "failedFiles": []}
    assert dbsession.execute(select(FollowUpCode)).first() is None
    supervisor.post_json("/api/incidents/1/follow-up-messages", {"body": "Hi"}, status=409)


def test_a_retry_answers_the_reference_without_a_code(client, site, token):
    body = report_body(site, clientId=str(uuid.uuid4()))
    first = file_report(client, token, body, status=201).json
    again = file_report(client, token, body, status=200).json
    assert "followUpCode" in first
    assert again == {"reference": first["reference"], "failedFiles": []}
