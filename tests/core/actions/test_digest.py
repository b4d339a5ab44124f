"""The daily digest: one mail per assignee listing exactly their actions due
tomorrow or overdue (judged in the server's zone), nothing for anyone else;
the schedule that fires it at 07:00 local time; the `ehs digest` command."""

from __future__ import annotations

import datetime as dt
import re
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest
from babel.dates import format_date

from ehs_core import cli
from ehs_core.actions import digest as digest_module
from ehs_core.actions.digest import daily_schedule, send_digests
from ehs_core.jobs.models import PENDING, OutboxJob
from ehs_core.testing import PUBLIC_URL, mail_html
from tests.core.workflow.support import add_action, body_of, detail, new_site, report, set_action


def digests(inbox, address):
    return [m for m in inbox.to(address) if not m["Subject"].startswith("Action assigned")]


def build(admin, number, assignee, plan, on):
    """Create actions from (title, status, due offset from `on`) rows."""
    for title, status, offset in plan:
        due = None if offset is None else (on + dt.timedelta(days=offset)).isoformat()
        action = add_action(admin, number, title=title, assigneeId=assignee.user["id"], dueDate=due)
        if status == "verified":
            set_action(admin, action["id"], status="done")
        if status != "open":
            set_action(admin, action["id"], status=status)
    return len(plan)


ALICE_LISTED = [("tomorrow-alice", "open", 1), ("late-open-alice", "open", -1),
                ("late-progress-alice", "in_progress", -12)]
ALICE_UNLISTED = [("later-alice", "open", 2), ("today-alice", "open", 0),
                  ("finished-late-alice", "done", -3), ("verified-late-alice", "verified", -4),
                  ("dropped-late-alice", "cancelled", -2), ("undated-alice", "open", None),
                  ("finished-tomorrow-alice", "done", 1)]
BOB_LISTED = [("late-bob", "in_progress", -30)]
CAROL_UNLISTED = [("later-carol", "open", 6), ("finished-carol", "done", -1),
                  ("dropped-carol", "cancelled", 1)]


def test_one_digest_per_assignee_listing_due_tomorrow_and_overdue(admin, make_user, inbox, registry):
    site = new_site(admin)
    alice = make_user("reporter")
    bob = make_user("supervisor")
    carol = make_user("reporter")
    dave = make_user("reporter")
    first = report(admin, site, title="Spill")["number"]
    second = report(admin, site, title="Trip")["number"]
    on = dt.datetime.now(dt.UTC).date()
    made = build(admin, first, alice, ALICE_LISTED[:2] + ALICE_UNLISTED[:4], on)
    made += build(admin, second, alice, ALICE_LISTED[2:] + ALICE_UNLISTED[4:], on)
    made += build(admin, second, bob, BOB_LISTED, on)
    made += build(admin, first, carol, CAROL_UNLISTED, on)
    inbox.wait(made)  # the assignment notices
    inbox.settle()
    inbox.clear()

    assert send_digests(registry) == 2
    inbox.wait(2)
    inbox.settle()
    assert len(inbox.messages) == 2

    [to_alice] = digests(inbox, alice.user["email"])
    text = body_of(to_alice)
    for title, _, _ in ALICE_LISTED:
        assert title in text
    for title, _, _ in ALICE_UNLISTED + BOB_LISTED + CAROL_UNLISTED:
        assert title not in text
    references = {detail(admin, n)["reference"] for n in (first, second)}
    assert all(reference in text for reference in references)
    # dates as people write them, not ISO
    assert f"due {format_date(on + dt.timedelta(days=1), 'd MMM y', locale='en')})" in text
    assert (on + dt.timedelta(days=1)).isoformat() not in text
    listed = {a["title"]: a["id"] for n in (first, second) for a in detail(admin, n)["actions"]}
    html = mail_html(to_alice)
    for title, _, _ in ALICE_LISTED:  # each links to the page where it is marked done
        assert f"{title} (due" in text and re.search(rf"/actions/{listed[title]}\s", text + "\n")
        assert f'href="{PUBLIC_URL}/actions/{listed[title]}"' in html and title in html
    assert html.count("OVERDUE") == 2  # the two late ones, in words as well as colour

    [to_bob] = digests(inbox, bob.user["email"])
    text = body_of(to_bob)
    assert "late-bob" in text
    assert not any(title in text for title, _, _ in ALICE_LISTED + ALICE_UNLISTED + CAROL_UNLISTED)

    assert digests(inbox, carol.user["email"]) == []
    assert digests(inbox, dave.user["email"]) == []
    assert inbox.to(admin.get("/api/auth/me").json["user"]["email"]) == []


def test_no_digests_when_nothing_is_due(admin, make_user, inbox, registry):
    site = new_site(admin)
    carol = make_user("reporter")
    number = report(admin, site)["number"]
    on = dt.datetime.now(dt.UTC).date()
    made = build(admin, number, carol, CAROL_UNLISTED, on)
    add_action(admin, number, title="nobody's, overdue", dueDate=(on - dt.timedelta(days=3)).isoformat())
    inbox.wait(made)
    inbox.settle()
    inbox.clear()
    assert send_digests(registry) == 0
    assert inbox.settle() == []


def zone_off_the_utc_date():
    """A zone whose date differs from the UTC date right now."""
    now = dt.datetime.now(dt.UTC)
    for name in ("Pacific/Kiritimati", "Etc/GMT+12"):
        if now.astimezone(ZoneInfo(name)).date() != now.date():
            return name
    raise AssertionError("one of the zones always differs")


def test_the_digest_judges_dates_in_the_server_zone(admin, make_user, inbox, registry, monkeypatch):
    name = zone_off_the_utc_date()
    monkeypatch.setitem(registry.settings, "ehs.timezone", name)
    local = dt.datetime.now(ZoneInfo(name)).date()
    site = new_site(admin)
    erin = make_user("reporter")
    number = report(admin, site)["number"]
    made = build(admin, number, erin, [("local-tomorrow", "open", 1), ("local-yesterday", "open", -1),
                                       ("local-today", "open", 0), ("local-later", "open", 2)], local)
    inbox.wait(made)
    inbox.settle()
    inbox.clear()
    assert send_digests(registry) == 1
    [mail] = inbox.wait(1)
    text = body_of(mail)
    assert "local-tomorrow" in text
    assert "local-yesterday" in text
    assert "local-today" not in text
    assert "local-later" not in text
    overdue = {a["title"]: a["overdue"] for a in detail(admin, number)["actions"]}
    assert overdue == {"local-tomorrow": False, "local-yesterday": True, "local-today": False,
                       "local-later": False}


# --- the schedule -----------------------------------------------------------


def fires(registry, *moments):
    due = daily_schedule(registry)
    return [due(moment) for moment in moments]


def test_the_schedule_fires_only_at_seven_utc_in_tests(registry):
    at = dt.datetime(2030, 3, 14)
    assert fires(registry, at.replace(hour=7)) == [True]
    assert fires(registry, at.replace(hour=6, minute=59), at.replace(hour=7, minute=1),
                 at.replace(hour=19), at.replace(hour=0), at.replace(hour=8)) == [False] * 5
    fired = [m for m in (at + dt.timedelta(minutes=i) for i in range(24 * 60)) if daily_schedule(registry)(m)]
    assert fired == [at.replace(hour=7)]


@pytest.mark.parametrize(("zone", "utc_hour", "expected"), [
    ("Asia/Tokyo", 22, True),  # 07:00 the next day in Tokyo
    ("Asia/Tokyo", 7, False),
    ("America/New_York", 12, True),  # winter: UTC-5
    ("America/New_York", 11, False),
])
def test_the_schedule_follows_the_server_zone(zone, utc_hour, expected):
    registry = SimpleNamespace(settings={"ehs.timezone": zone})
    moment = dt.datetime(2030, 1, 15, utc_hour, 0)
    assert fires(registry, moment) == [expected]


def test_the_schedule_follows_daylight_saving_time():
    registry = SimpleNamespace(settings={"ehs.timezone": "America/New_York"})
    summer = dt.datetime(2030, 7, 15)
    assert fires(registry, summer.replace(hour=11), summer.replace(hour=12)) == [True, False]


def test_the_digest_is_a_periodic_job_and_a_command(registry, capsys, monkeypatch):
    assert "actions.digest" in registry["jobs"]
    ran = []
    monkeypatch.setattr(cli, "_bootstrap", lambda config: registry)
    monkeypatch.setattr(digest_module, "send_digests", lambda reg, *deliver: ran.append(reg) or 3)
    assert cli.main(["digest", "production.ini"]) == 0
    assert ran == [registry]
    assert "3 digest(s) sent" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["digest", "--help"])
    assert exit_info.value.code == 0
    assert "config" in capsys.readouterr().out


def test_the_digest_command_delivers_before_it_exits(admin, make_user, inbox, registry, monkeypatch, capsys,
                                                     dbsession):
    """With in-process jobs nothing would deliver queued mail once the
    command ends: what it reports as sent has reached SMTP when it returns.
    The web process's job runner is held off, so only the command can send."""
    site = new_site(admin)
    alice = make_user("reporter")
    number = report(admin, site)["number"]
    on = dt.datetime.now(dt.UTC).date()
    build(admin, number, alice, ALICE_LISTED[:1], on)
    inbox.wait(1)
    inbox.settle()
    inbox.clear()
    monkeypatch.setattr(cli, "_bootstrap", lambda ini: registry)
    assert cli.main(["digest", "development.ini"]) == 0
    assert [m["To"] for m in inbox.messages] == [alice.user["email"]]
    assert capsys.readouterr().out.strip() == "1 digest(s) sent"
    assert dbsession.query(OutboxJob).filter(OutboxJob.status == PENDING).count() == 0
    # Run again the same day (or by the clock after a crash): nobody gets it twice.
    assert cli.main(["digest", "development.ini"]) == 0
    assert len(inbox.settle()) == 1


def test_the_digest_command_says_what_was_not_delivered(admin, make_user, inbox, registry, monkeypatch,
                                                         capsys):
    site = new_site(admin)
    alice, bob = make_user("reporter"), make_user("reporter")
    number = report(admin, site)["number"]
    on = dt.datetime.now(dt.UTC).date()
    build(admin, number, alice, ALICE_LISTED[:1], on)
    build(admin, number, bob, BOB_LISTED, on)
    inbox.wait(2)
    inbox.settle()
    inbox.clear()
    inbox.refused.add(bob.user["email"])
    monkeypatch.setattr(cli, "_bootstrap", lambda ini: registry)
    assert cli.main(["digest", "development.ini"]) == 1
    assert capsys.readouterr().out.strip() == "1 digest(s) sent, 1 not delivered"
    assert [m["To"] for m in inbox.messages] == [alice.user["email"]]
    lost = admin.get("/api/health").json["detail"]["mail"]["latest"]
    assert [entry["recipient"] for entry in lost] == [bob.user["email"]]
