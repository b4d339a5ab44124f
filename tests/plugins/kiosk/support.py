"""Helpers shared by the kiosk tests: sites, links, and reports filed through
a link the way the kiosk page files them (multipart, `X-Kiosk-Token`)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from sqlalchemy import func, select

from ehs_core import testing
from ehs_core.attachments.models import Attachment
from ehs_core.incidents.models import Incident

HEADER = "X-Kiosk-Token"
OCCURRED = "2024-05-01T08:15:00+02:00"
REPORTS = "/api/kiosk/reports"
CONFIG = "/api/kiosk/config"
LINKS = "/api/kiosks"

File = tuple[str, bytes, str]  # (file name, content, client's Content-Type)


def new_site(admin: Any, name: str = "Plant North") -> int:
    return testing.new_site(admin, name)["id"]


def new_area(admin: Any, site_id: int, name: str = "Loading dock") -> int:
    return testing.new_area(admin, site_id, name)["id"]


def new_link(manager: Any, name: str = "Gate tablet", site_id: int | None = None) -> dict:
    body: dict[str, Any] = {"name": name}
    if site_id is not None:
        body["siteId"] = site_id
    return manager.post_json(LINKS, body, status=201).json


def report_body(site_id: int, **extra: Any) -> dict[str, Any]:
    return testing.report_body(site_id, **{"occurredAt": OCCURRED, **extra})


def file_report(browser: Any, token: str, body: Any, files: Iterable[File] = (), status: int | str = 201,
                field: str = "files", **kw: Any) -> Any:
    """POST a report through a link: the JSON in the part `report`, files beside it."""
    report = body if isinstance(body, str) else json.dumps(body)
    return browser.post(REPORTS, params=[("report", report)],
                        upload_files=[(field, name, data, ctype) for name, data, ctype in files],
                        content_type="multipart/form-data", headers={HEADER: token, **kw.pop("headers", {})},
                        status=status, **kw)


def kiosk_config(browser: Any, token: str, status: int | str = 200) -> Any:
    return browser.get(CONFIG, headers={HEADER: token}, status=status)


def incident_count(dbsession: Any) -> int:
    return dbsession.execute(select(func.count()).select_from(Incident)).scalar()


def attachment_count(dbsession: Any) -> int:
    return dbsession.execute(select(func.count()).select_from(Attachment)).scalar()


def stored_files(upload_dir: str) -> set[str]:
    return set(os.listdir(upload_dir)) if os.path.isdir(upload_dir) else set()


def assert_error(response: Any, status: int) -> None:
    assert response.status_int == status, response.body[:300]
    assert response.content_type == "application/json"
    assert isinstance(response.json["error"], str) and response.json["error"]
