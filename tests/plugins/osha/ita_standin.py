"""A stand-in for OSHA's ITA API on loopback, written from OSHA's published
description ("Injury Tracking Application API documentation", v1): a real
HTTP server started by the test, never the real service.

What it holds to, as the description says: `Authorization: Bearer <token>`
on every call (else 403 without JSON); `/establishments` (GET lists, POST
creates; names unique in the account), `/forms/form300A`, `/forms/caseData`,
`/submissions`; answers `{success, errors: [{field, message}]}`, a
non-empty `errors` meaning nothing was created; the 300A's cross-field
checks as OSHA publishes them ("must"), and `change_reason` required when an
establishment's year is submitted again. Every request is kept for the
test to read (`calls`)."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PREFIX = "/oshaApi/v1"
SUMMARY_NUMBERS = ("annual_average_employees", "total_hours_worked", "total_deaths", "total_dafw_cases",
                   "total_djtr_cases", "total_other_cases", "total_dafw_days", "total_djtr_days",
                   "total_injuries", "total_skin_disorders", "total_respiratory_conditions",
                   "total_poisonings", "total_hearing_loss", "total_other_illnesses")
NAMES_NOT_SENT = ("employee_name", "name", "employee_address", "physician_name", "treatment_facility")


class StandIn:
    def __init__(self, token: str) -> None:
        self.token = token
        self.calls: list[dict[str, Any]] = []
        self.establishments: dict[int, dict[str, Any]] = {}
        self.forms: dict[int, dict[str, Any]] = {}
        self.cases: dict[int, dict[str, Any]] = {}
        self.submissions: dict[int, dict[str, Any]] = {}
        self._ids = 100
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{PREFIX}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> StandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    # --- the API ----------------------------------------------------------

    def answer(self, method: str, path: str, body: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
        if method == "GET" and path == "/establishments":
            return 200, {"success": True, "errors": [], "establishments": list(self.establishments.values())}
        if method != "POST" or not isinstance(body, dict):
            return 404, {"success": False, "errors": [{"field": None, "message": "No such resource"}]}
        route = {"/establishments": self.establishment, "/forms/form300A": self.form300a,
                 "/forms/caseData": self.case_data, "/submissions": self.submission}.get(path)
        if route is None:
            return 404, {"success": False, "errors": [{"field": None, "message": "No such resource"}]}
        errors = route(body)
        if errors:
            return 400, {"success": False, "errors": [{"field": f, "message": m} for f, m in errors]}
        created = self.created
        return 200, {"success": True, "errors": [], **created}

    def establishment(self, body: dict[str, Any]) -> list[tuple[str, str]]:
        errors = []
        name = str(body.get("establishment_name") or "")
        if not name or len(name) > 100:
            errors.append(("establishment_name", "Required, at most 100 characters"))
        if any(e["establishment_name"].lower() == name.lower() for e in self.establishments.values()):
            errors.append(("establishment_name", "An establishment of this name exists in the account"))
        if not re.fullmatch(r"\d{9}", str(body.get("ein") or "")):
            errors.append(("ein", "9 digits"))
        for key in ("street_address", "city"):
            if not body.get(key):
                errors.append((key, "Required"))
        if not re.fullmatch(r"[A-Z]{2}", str(body.get("state") or "")):
            errors.append(("state", "A 2-letter state code"))
        if not re.fullmatch(r"\d{5}(\d{4})?", str(body.get("zip") or "")):
            errors.append(("zip", "5 or 9 digits"))
        if not re.fullmatch(r"\d{6}", str(body.get("naics_code") or "")):
            errors.append(("naics_code", "6 digits"))
        if body.get("size") not in (1, 21, 22, 3):
            errors.append(("size", "1, 21, 22 or 3"))
        if not errors:
            new = self.next_id()
            self.establishments[new] = {"id": new, **body}
            self.created = {"id": new}
        return errors

    def form300a(self, body: dict[str, Any]) -> list[tuple[str, str]]:
        if body.get("establishment_id") not in self.establishments:
            return [("establishment_id", "No such establishment")]
        errors = []
        for key in SUMMARY_NUMBERS:
            if not isinstance(body.get(key), int) or body[key] < 0:
                return [(key, "A whole number, 0 or more")]
        if not isinstance(body.get("year_filing_for"), int) or body["year_filing_for"] < 2016:
            errors.append(("year_filing_for", "A year from 2016"))
        g, h, i, j = (body[key] for key in ("total_deaths", "total_dafw_cases", "total_djtr_cases",
                                            "total_other_cases"))
        k, days_l = body["total_dafw_days"], body["total_djtr_days"]
        types = sum(body[key] for key in SUMMARY_NUMBERS[8:])
        cases = g + h + i + j
        if types != cases:
            errors.append(("total_injuries", "The injury and illness types must add up to the cases"))
        if body["annual_average_employees"] <= cases:
            errors.append(("annual_average_employees",
                           "The annual average number of employees must be greater than the number of cases"))
        if h and not k:
            errors.append(("total_dafw_days", "Days-away cases need days away"))
        if k and not h:
            errors.append(("total_dafw_cases", "Days away need days-away cases"))
        if i and not days_l:
            errors.append(("total_djtr_days", "Transfer cases need transfer days"))
        if days_l and not (h or i):
            errors.append(("total_djtr_cases", "Transfer days need days-away or transfer cases"))
        if body["total_hours_worked"] <= 0 or body["annual_average_employees"] <= 0:
            errors.append(("total_hours_worked", "Must be greater than 0"))
        if not errors:
            new = self.next_id()
            self.forms[new] = {"id": new, **body}
            self.created = {"id": new}
        return errors

    def case_data(self, body: dict[str, Any]) -> list[tuple[str, str]]:
        if body.get("establishment_id") not in self.establishments:
            return [("establishment_id", "No such establishment")]
        errors = [(key, "Not collected (1904.41(b))") for key in NAMES_NOT_SENT if key in body]
        if body.get("incident_outcome") not in (1, 2, 3, 4):
            errors.append(("incident_outcome", "1 to 4"))
        if body.get("type_of_incident") not in (1, 2, 3, 4, 5, 6):
            errors.append(("type_of_incident", "1 to 6"))
        if not re.fullmatch(r"\d\d/\d\d/\d{4}", str(body.get("date_of_incident") or "")):
            errors.append(("date_of_incident", "MM/DD/YYYY"))
        if body.get("time_unknown") not in (0, 1):
            errors.append(("time_unknown", "0 or 1"))
        elif body["time_unknown"] == 0 and not re.fullmatch(r"\d\d:\d\d", str(body.get("time_of_incident"))):
            errors.append(("time_of_incident", "HH:MM, or time_unknown 1"))
        if not errors:
            new = self.next_id()
            self.cases[new] = {"id": new, **body}
            self.created = {"id": new}
        return errors

    def submission(self, body: dict[str, Any]) -> list[tuple[str, str]]:
        establishment, year = body.get("establishment_id"), body.get("year_filing_for")
        if establishment not in self.establishments:
            return [("establishment_id", "No such establishment")]
        if body.get("form300A_id") not in self.forms:
            return [("form300A_id", "No such Form 300A")]
        before = [s for s in self.submissions.values()
                  if s["establishment_id"] == establishment and s["year_filing_for"] == year]
        if before and not str(body.get("change_reason") or "").strip():
            return [("change_reason", "This establishment's year was submitted before: give the reason "
                                      "for the change")]
        new = self.next_id()
        confirmation = f"ITA-{year}-{new:06d}"
        self.submissions[new] = {"id": new, "confirmation_number": confirmation, **body}
        self.created = {"id": new, "confirmation_number": confirmation}
        return []

    # --- HTTP -------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def handle_any(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                path = self.path.split("?")[0]
                with standin._lock:
                    standin.calls.append({"method": method, "path": path, "body": body,
                                          "authorization": self.headers.get("Authorization")})
                    if self.headers.get("Authorization") != f"Bearer {standin.token}":
                        self.send(403, b"<html><body>Forbidden</body></html>", "text/html")
                        return
                    if not path.startswith(PREFIX):
                        self.send(404, b"{}", "application/json")
                        return
                    standin.created = {}
                    status, answer = standin.answer(method, path[len(PREFIX):], body)
                self.send(status, json.dumps(answer).encode(), "application/json")

            def send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self.handle_any("GET")

            def do_POST(self) -> None:
                self.handle_any("POST")

        return Handler
