"""`GET /metrics`: Prometheus text, readable from allowed addresses or with
the token, and its counts move with what the service does (issue 35)."""

from __future__ import annotations

import re

import pytest

from ehs_core.testing import file_report


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample of the exposition text (0 when absent)."""
    want = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
    for line in text.splitlines():
        match = re.fullmatch(r"(\w+)(?:\{(.*)\})? (\S+)", line)
        if match and match.group(1) == name:
            found = ",".join(sorted((match.group(2) or "").split(","))) if match.group(2) else ""
            if found == want:
                return float(match.group(3))
    return 0.0


def scrape(browser) -> str:
    response = browser.get("/metrics")
    assert response.content_type == "text/plain"
    return response.text


def test_the_counts_move_with_what_the_service_does(admin, site, inbox):
    before = scrape(admin)
    file_report(admin, site, severity="high")
    file_report(admin, site)
    admin.get("/api/incidents/999999", status=404)
    after = scrape(admin)
    created = dict(method="POST", route="incidents", status="201")
    assert sample(after, "ehs_http_requests_total", **created) == \
        sample(before, "ehs_http_requests_total", **created) + 2
    missing = dict(method="GET", route="incident", status="404")
    assert sample(after, "ehs_http_requests_total", **missing) == \
        sample(before, "ehs_http_requests_total", **missing) + 1
    assert sample(after, "ehs_incidents_filed_total") == sample(before, "ehs_incidents_filed_total") + 2
    assert sample(after, "ehs_http_request_duration_seconds_count", route="incidents") >= 2
    sent = dict(job="mail.deliver", outcome="done")
    assert sample(after, "ehs_jobs_total", **sent) >= sample(before, "ehs_jobs_total", **sent) + 1
    assert sample(after, "ehs_jobs_waiting") == 0
    assert "ehs_jobs_oldest_waiting_seconds" in after and "ehs_db_pool_connections_in_use" in after


def test_mail_that_cannot_be_sent_shows_as_waiting(admin, site, inbox, smtp_server):
    smtp_server.stop()
    try:
        file_report(admin, site, severity="critical")
        text = scrape(admin)
    finally:
        smtp_server.start()
    assert sample(text, "ehs_jobs_waiting") == 1
    assert sample(text, "ehs_jobs_total", job="mail.deliver", outcome="retry") >= 1


@pytest.mark.parametrize("address", ["203.0.113.9"])
def test_only_allowed_addresses_or_the_token_may_read_it(new_client, registry, monkeypatch, address):
    outsider = new_client()
    outsider.extra_environ["REMOTE_ADDR"] = address
    outsider.get("/metrics", status=404)
    monkeypatch.setitem(registry.settings, "ehs.metrics_token", "a-long-scrape-token")
    outsider.get("/metrics", headers={"Authorization": "Bearer wrong"}, status=404)
    assert "ehs_http_requests_total" in outsider.get(
        "/metrics", headers={"Authorization": "Bearer a-long-scrape-token"}).text
