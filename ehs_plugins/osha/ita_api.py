"""Filing with OSHA's Injury Tracking Application through its API
(1904.41; OSHA's "Injury Tracking Application API documentation", v1).

What the published description gives, and this client follows:

- base URL `https://www.osha.gov/oshaApi/v1`, and OSHA's preview
  environment (same validation, nothing counts) for dry runs; both are
  settings (`osha.ita_url`, `osha.ita_preview_url`);
- every call carries `Authorization: Bearer <ITA API token>`, the token
  issued from the employer's ITA account (setting `osha.ita_token`);
- resources: `/establishments` (listed and created; an establishment is
  matched by its name, unique in the account), `/forms/form300A` (the
  300A of a year), `/forms/caseData` (one 300/301 case), `/submissions`
  (an establishment's year, with `change_reason` when it changes what was
  submitted before);
- answers are JSON `{success, errors: [...]}`: a non-empty `errors` means
  nothing was created, whatever the HTTP status; each error names its
  `field` and a `message`. A missing or wrong token is refused with 401 or
  403, before any JSON.

Field names are those of ITA's data dictionary (the CSV columns of `ita`),
the rows made by the same functions as the files: one set of rules.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from ehs_plugins.osha import ita
from ehs_plugins.osha.log import SiteYear

TIMEOUT = 30  # seconds per call


class ItaRefused(Exception):
    """OSHA's answer named errors: nothing was created by that call."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__("; ".join(f"{e.get('field') or '-'}: {e.get('message')}" for e in errors))
        self.errors = errors


class ItaUnreachable(Exception):
    """No answer from OSHA (network, timeout, or an answer that is not the API's)."""


def named_errors(raw: Any) -> list[dict[str, Any]]:
    """The `errors` of an answer as [{field, message}] (an error given as
    plain text has no field)."""
    found = []
    for item in raw or []:
        if isinstance(item, dict):
            found.append({"field": item.get("field"), "message": str(item.get("message") or item)})
        else:
            found.append({"field": None, "message": str(item)})
    return found


@dataclass
class Client:
    base_url: str
    token: str
    timeout: float = TIMEOUT

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = json.dumps(body).encode("utf-8") if body is not None else None
        url = self.base_url.rstrip("/") + path
        if not url.startswith(("https://", "http://")):
            raise ItaUnreachable(f"Not a web address: {url[:80]}")
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)  # noqa: S310 (http(s) only)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 (http(s) only)
                raw = response.read()
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 403):
                raise ItaRefused([{"field": None, "message": f"OSHA refused the ITA API token ({exc.code}): "
                                                             "check the osha.ita_token setting"}]) from None
            raw = exc.read()
            answer = parse(raw)
            if answer is None:
                raise ItaUnreachable(f"OSHA answered {exc.code} without the API's JSON") from None
            raise ItaRefused(named_errors(answer.get("errors")) or [
                {"field": None, "message": f"OSHA answered {exc.code}"}]) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            raise ItaUnreachable(f"No answer from {self.base_url}: {exc}") from None
        answer = parse(raw)
        if answer is None:
            raise ItaUnreachable("OSHA's answer was not the API's JSON")
        errors = named_errors(answer.get("errors"))
        if errors or answer.get("success") is False:
            raise ItaRefused(errors or [{"field": None, "message": "OSHA did not accept the request"}])
        return answer


def parse(raw: bytes) -> dict[str, Any] | None:
    try:
        answer = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return answer if isinstance(answer, dict) else None


ESTABLISHMENT_FIELDS = ("establishment_name", "ein", "company_name", "street_address", "city", "state", "zip",
                        "naics_code", "industry_description", "size", "establishment_type")


def summary_fields(item: SiteYear, company: str) -> dict[str, Any]:
    return dict(zip(ita.SUMMARY_COLUMNS, ita.summary_row(item, company), strict=True))


@dataclass
class Filing:
    """What a filing did: the ids OSHA gave and its confirmation."""

    establishment_id: Any = None
    form300a_id: Any = None
    case_ids: list[Any] = field(default_factory=list)
    submission_id: Any = None
    confirmation: str | None = None

    def json(self) -> dict[str, Any]:
        return {"establishmentId": self.establishment_id, "form300AId": self.form300a_id,
                "caseDataIds": self.case_ids, "submissionId": self.submission_id,
                "confirmation": self.confirmation}


def file_site_year(client: Client, item: SiteYear, company: str, with_case_data: bool,
                   change_reason: str | None) -> Filing:
    """The establishment (found by name or created), its 300A, its cases
    when the 300 and 301 are required, then the submission."""
    fields = summary_fields(item, company)
    done = Filing()
    listed = client.call("GET", "/establishments").get("establishments") or []
    name = fields["establishment_name"]
    found = next((e for e in listed if str(e.get("establishment_name", "")).strip().lower()
                  == name.strip().lower()), None)
    if found is None:
        created = client.call("POST", "/establishments", {key: fields[key] for key in ESTABLISHMENT_FIELDS})
        done.establishment_id = created.get("id")
    else:
        done.establishment_id = found.get("id")
    form = {key: value for key, value in fields.items() if key not in ESTABLISHMENT_FIELDS}
    form.update(establishment_id=done.establishment_id, change_reason=change_reason or "")
    done.form300a_id = client.call("POST", "/forms/form300A", form).get("id")
    if with_case_data:
        for row in ita.case_rows(item):
            case = dict(zip(ita.CASE_COLUMNS, row, strict=True))
            case["establishment_id"] = done.establishment_id
            done.case_ids.append(client.call("POST", "/forms/caseData", case).get("id"))
    submitted = client.call("POST", "/submissions", {
        "establishment_id": done.establishment_id, "year_filing_for": item.year,
        "form300A_id": done.form300a_id, "change_reason": change_reason or ""})
    done.submission_id = submitted.get("id")
    confirmation = (submitted.get("confirmation_number") or submitted.get("confirmation")
                    or submitted.get("id"))
    done.confirmation = str(confirmation) if confirmation is not None else None
    return done
