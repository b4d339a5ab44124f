"""Follow-up mail (issue #36 item 10): the reporter hears when their report
is closed or reopened, with what was done; an investigation lead when named;
the lead and the site's supervisors when an incident's last action is done;
everyone the filing notice reaches when a report is raised to high or
critical later. Each can be turned off on the account page; an anonymous
reporter is never mailed."""

from __future__ import annotations

import pytest

from ehs_core.testing import form_with, mail_text
from tests.core.workflow.support import (
    add_action,
    add_root_cause,
    bring_to,
    move,
    new_site,
    report,
    set_action,
)


@pytest.fixture
def people(admin, make_user, inbox):
    team = {"rita": make_user("reporter", name="Rita Reporter"),
            "sam": make_user("supervisor", name="Sam Supervisor"),
            "sue": make_user("safety_manager", name="Sue Safety")}
    inbox.settle()
    inbox.clear()
    return team


def to(inbox, subject_part: str) -> list[str]:
    return sorted(m["To"] for m in inbox.settle() if subject_part in m["Subject"])


def test_the_reporter_hears_when_their_report_is_closed_and_reopened(admin, people, inbox):
    site = new_site(admin)
    number = report(people["rita"], site, title="Loose rail")["number"]
    bring_to(admin, number, "actions")
    action = add_action(admin, number, title="Tighten the rail bolts")
    set_action(admin, action["id"], status="done")
    move(admin, number, "verification")
    set_action(admin, action["id"], status="verified")
    inbox.settle()
    inbox.clear()
    move(admin, number, "closed", note="Bolts checked weekly now.")
    closed = [m for m in inbox.wait(1) if "was closed" in m["Subject"]]
    assert [m["To"] for m in closed] == [people["rita"].user["email"]]
    body = mail_text(closed[0])
    assert "Tighten the rail bolts (verified)" in body and "Bolts checked weekly now." in body
    inbox.clear()
    move(admin, number, "investigation", note="It came loose again.")
    assert to(inbox, "was reopened") == [people["rita"].user["email"]]


def test_an_anonymous_reporter_is_never_mailed(admin, people, inbox):
    site = new_site(admin)
    number = report(people["rita"], site, anonymous=True)["number"]
    bring_to(admin, number, "closed")
    assert to(inbox, "was closed") == []


def test_a_reporter_who_turned_it_off_hears_nothing(admin, people, inbox):
    site = new_site(admin)
    number = report(people["rita"], site)["number"]
    page = people["rita"].get("/account")
    form = form_with(page, "/account/mail")
    form.get("on", index=0).checked = False  # report_followup is the first kind
    form.submit(status=302)
    checked = form_with(people["rita"].get("/account"), "/account/mail").get("on", index=0).checked
    assert checked is False
    bring_to(admin, number, "closed")
    assert to(inbox, "was closed") == []


def test_the_lead_hears_when_named_but_not_when_naming_themselves(admin, people, inbox):
    site = new_site(admin)
    number = report(people["rita"], site)["number"]
    bring_to(admin, number, "investigation")
    admin.put_json(f"/api/incidents/{number}/investigation", {"leadId": people["sam"].user["id"]})
    assert to(inbox, "You lead the investigation") == [people["sam"].user["email"]]
    inbox.clear()
    people["sue"].put_json(f"/api/incidents/{number}/investigation", {"leadId": people["sue"].user["id"]})
    assert to(inbox, "You lead the investigation") == []


def test_the_lead_and_site_supervisors_hear_when_the_last_action_is_done(admin, people, make_user, inbox):
    site = new_site(admin)
    other = make_user("supervisor")  # another site's supervisor
    admin.patch_json(f"/api/users/{people['sam'].user['id']}", {"siteIds": [site]})
    admin.patch_json(f"/api/users/{other.user['id']}", {"siteIds": [new_site(admin, 'Plant South')]})
    number = report(people["rita"], site)["number"]
    bring_to(admin, number, "investigation")
    admin.put_json(f"/api/incidents/{number}/investigation", {"leadId": people["sue"].user["id"]})
    add_root_cause(admin, number)
    move(admin, number, "actions")
    first = add_action(admin, number, title="First", assigneeId=people["rita"].user["id"])
    second = add_action(admin, number, title="Second", assigneeId=people["rita"].user["id"])
    inbox.settle()
    inbox.clear()
    set_action(people["rita"], first["id"], status="done")
    assert to(inbox, "is done") == []  # one still open
    set_action(people["rita"], second["id"], status="done")
    assert to(inbox, "is done") == sorted([people["sam"].user["email"], people["sue"].user["email"]])


def test_raising_a_report_to_high_sends_the_serious_notice(admin, people, inbox):
    site = new_site(admin)
    number = report(people["rita"], site, severity="low")["number"]
    inbox.settle()
    inbox.clear()
    people["sam"].patch_json(f"/api/incidents/{number}", {"severity": "high"})
    messages = [m for m in inbox.wait(2) if "[high]" in m["Subject"]]
    assert sorted(m["To"] for m in messages) == sorted([people["sue"].user["email"], "admin@acme.test"])
    assert "was raised to high (filed as low)" in mail_text(messages[0])
    inbox.clear()
    people["sam"].patch_json(f"/api/incidents/{number}", {"severity": "critical"})
    assert to(inbox, "[critical]") == []  # already serious: told once
