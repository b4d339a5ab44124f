"""Arbitrary values in every form of the pages, and arbitrary multipart
bodies at a reporting link (hypothesis): the answer is never a 5xx.

The pages' forms validate through the API's schema types (a NUL in an
action's note or a transition's note was a 500 on PostgreSQL, and a NUL was
stored in a root cause's "why"). The forms are found, not listed: the pages
are walked from home as an admin (links on this site, at most MAX_PAGES),
and each form that posts is sent with one or two of its fields replaced by
odd text (control characters, lone surrogates, bytes that are not UTF-8,
huge values, numbers where text goes and text where numbers go), the others
as the page filled them. Forms that end the session are left out.

EHS_FUZZ_EXAMPLES bounds the examples (twice as many per form).
"""

from __future__ import annotations

import json
import os
import re
from collections import deque
from typing import Any
from urllib.parse import urlencode, urlsplit

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ehs_core.testing import OCCURRED, PUBLIC_URL
from tests.core.attachments import samples

EXAMPLES = int(os.environ.get("EHS_FUZZ_EXAMPLES", "8"))
MAX_PAGES = 60
ODD = st.sampled_from([
    b"\x00", b"x\x00y", b"a\x01b", b"\x1b[31mred", b"\x7f", "\u0085".encode(), b"\xff\xfe", b"\xed\xa0\x80",
    "\u202e\u0645\u0631\u062d\u0628\u0627".encode(), "\U0001f4a5".encode() * 50, b"\r\nBcc: evil@example.com",
    b" ", b"", b"x" * 30_000, b"-1", b"0", b"99999999999999999999", b"2147483648", b"1e309", b"NaN",
    b"2999-12-31T23:59", b"0001-01-01", b"on", b"true", b"[]", b"{}", b"<script>alert(1)</script>",
])
FUZZ = settings(max_examples=EXAMPLES * 2, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])


def same_site_paths(page: Any) -> list[str]:
    found = []
    for link in page.html.find_all("a", href=True):
        parts = urlsplit(link["href"])
        if parts.netloc in ("", urlsplit(PUBLIC_URL).netloc) and parts.path.startswith("/") \
                and not parts.path.startswith(("/api/", "/static/", "/sign-out")) \
                and not parts.path.endswith((".csv", ".pdf")):
            found.append(parts.path + ("?" + parts.query if parts.query else ""))
    return found


def page_forms(browser: Any, starts: list[str]) -> dict[str, tuple[str, bool, list[tuple[str, str]]]]:
    """The posting forms of the pages reached from `starts`, one per action
    (digits in it set aside): {pattern: (action, multipart, fields)}."""
    seen: set[str] = set()
    queue = deque(starts)
    forms: dict[str, tuple[str, bool, list[tuple[str, str]]]] = {}
    while queue and len(seen) < MAX_PAGES:
        path = queue.popleft()
        pattern = re.sub(r"\d+", "N", path.split("?")[0])
        if pattern in seen:
            continue
        seen.add(pattern)
        page = browser.get(path, expect_errors=True)
        if page.status_int != 200 or not page.content_type.startswith("text/html"):
            continue
        queue.extend(same_site_paths(page))
        for form in page.html.find_all("form"):
            action, method = form.get("action") or path, (form.get("method") or "get").lower()
            if method != "post" or "sign-out" in action:
                continue
            typed = form.find_all(["input", "textarea"])
            fields = [(field["name"], field.get("value", "")) for field in typed
                      if field.get("name") and field.get("type") not in ("file", "submit", "checkbox")]
            fields += [(select["name"], (select.find("option", selected=True) or select.find("option")
                                         or {}).get("value", "")) for select in form.find_all("select")
                       if select.get("name")]
            fields += [(box["name"], box.get("value", "on")) for box in typed
                       if box.get("type") == "checkbox" and box.get("name") and box.has_attr("checked")]
            multipart = form.get("enctype") == "multipart/form-data"
            forms.setdefault(re.sub(r"\d+", "N", action), (action, multipart, fields))
    return forms


def post_form(browser: Any, action: str, multipart: bool, fields: list[tuple[str, bytes]]) -> Any:
    if multipart:
        params = [(name, value.decode("utf-8", "replace")) for name, value in fields]
        return browser.post(action, params, upload_files=[("file", "odd.html", samples.HTML, "image/png")],
                            expect_errors=True)
    return browser.post(action, urlencode(fields).encode(), expect_errors=True,
                        content_type="application/x-www-form-urlencoded")


def test_no_page_form_answers_a_5xx_whatever_its_fields_hold(admin, make_user, site):
    reporter = make_user("reporter")
    number = admin.post_json("/api/incidents", {"title": "Seed", "type": "injury", "severity": "low",
                                                "occurredAt": OCCURRED, "siteId": site}).json["number"]
    admin.post_json(f"/api/incidents/{number}/root-causes",
                    {"category": "Equipment", "description": "Worn seal", "whys": ["Old"]})
    admin.post_json(f"/api/incidents/{number}/actions", {"title": "Fix", "assigneeId": reporter.user["id"]})
    admin.post_json(f"/api/osha/incidents/{number}/cases", {"name": "Pat"})
    admin.post_json("/api/kiosks", {"name": "Gate"})
    forms = page_forms(admin, ["/", f"/incidents/{number}", "/incidents/new", "/account", "/admin/users",
                               "/sites", "/actions", "/analytics"])
    assert len(forms) > 20, sorted(forms)
    failures = []
    for pattern, (action, multipart, fields) in sorted(forms.items()):
        try:
            form_property(admin, action, multipart, fields)()
        except Exception as exc:  # every form is tried; the list fails the test once
            failures.append(f"{pattern}: {str(exc).strip()[:400]}")
    assert failures == []


def form_property(browser: Any, action: str, multipart: bool, fields: list[tuple[str, str]]) -> Any:
    """The property for one form, as a hypothesis test."""
    names = sorted({name for name, _ in fields}) or ["x"]
    given_names = dict(fields)

    @given(changes=st.dictionaries(st.sampled_from(names), ODD, min_size=1, max_size=2))
    @FUZZ
    def run(changes: dict[str, bytes]) -> None:
        sent = [(name, changes.get(name, value.encode())) for name, value in fields]
        sent += [(name, value) for name, value in changes.items() if name not in given_names]
        response = post_form(browser, action, multipart, sent)
        assert response.status_int < 500, (response.status, response.text[:300], changes)

    return run


PART_NAMES = st.sampled_from(["report", "files", "file", "photo", "report ", "", "x" * 300])
FILE_BYTES = st.sampled_from([samples.PNG, samples.HTML, samples.SVG, b"", b"\x00" * 64, samples.JPEG[:40],
                              samples.claiming_size("JPEG", 13_000, 13_000), samples.animation("GIF", 3)])
REPORT_TEXT = st.one_of(
    st.sampled_from([b"", b"{", b"null", b"[]", b'{"title": "\\u0000"}', b'"\\ud800"', b"\xff\xfe", b"NaN",
                     b"[" * 3000 + b"]" * 3000]),
    st.dictionaries(st.sampled_from(["title", "type", "severity", "occurredAt", "siteId", "areaId",
                                     "reporterName", "description", "clientId", "extra"]),
                    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=30),
                              st.sampled_from(["\x00", "a\x01b", "2999-01-01T00:00:00Z", "x" * 30_000])),
                    max_size=6).map(lambda value: json.dumps(value).encode()))


def test_no_reporting_link_multipart_body_answers_a_5xx(admin, client, site):
    token = admin.post_json("/api/kiosks", {"name": "Gate"}).json["token"]
    valid = {"title": "Oil", "type": "hazard", "severity": "low", "occurredAt": OCCURRED, "siteId": site}

    @given(report=st.one_of(REPORT_TEXT, st.just(json.dumps(valid).encode())),
           files=st.lists(st.tuples(PART_NAMES, st.text(max_size=20), FILE_BYTES), max_size=6),
           name=PART_NAMES)
    @FUZZ
    def run(report: bytes, files: list[tuple[str, str, bytes]], name: str) -> None:
        response = client.post("/api/kiosk/reports", [(name or "report", report.decode("utf-8", "replace"))],
                               upload_files=[(part or "files", filename or "f", data)
                                             for part, filename, data in files],
                               content_type="multipart/form-data", headers={"X-Kiosk-Token": token},
                               expect_errors=True)
        assert response.status_int < 500, (response.status, response.text[:300])
        assert response.content_type == "application/json"

    run()
