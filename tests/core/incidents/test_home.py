"""The home page's queues (issue #36 item 11): what waits for triage and
investigation is listed most severe first, then newest."""

from __future__ import annotations

import re

from ehs_core.testing import new_site
from tests.core.workflow.support import report


def queue(page, heading_id: str) -> list[str]:
    section = page.text.split(f'id="{heading_id}"', 1)[1].split("</section>", 1)[0]
    return re.findall(r">(INC-\d{4})<", section)


def test_triage_lists_the_most_severe_first(admin, make_user):
    site = new_site(admin)["id"]
    low = report(admin, site, severity="low")["reference"]
    critical = report(admin, site, severity="critical")["reference"]
    medium = report(admin, site, severity="medium")["reference"]
    newer_low = report(admin, site, severity="low")["reference"]
    page = make_user("supervisor").get("/")
    assert queue(page, "q-triage") == [critical, medium, newer_low, low]
