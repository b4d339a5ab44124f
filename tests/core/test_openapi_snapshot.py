"""The OpenAPI document is a contract with every client: a refactor that is
meant to change no behaviour must leave it byte for byte the same. The saved
copy is the document with the three built-in plugins enabled, as the test
application builds it; regenerate it deliberately with
`EHS_TEST_WRITE_OPENAPI_SNAPSHOT=1 pytest tests/core/test_openapi_snapshot.py`
when the API is meant to change, and review the diff."""

from __future__ import annotations

import json
import os
from pathlib import Path

SNAPSHOT = Path(__file__).with_name("openapi_snapshot.json")


def canonical(doc: dict) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_the_openapi_document_matches_the_saved_copy_byte_for_byte(client, registry):
    assert tuple(registry["enabled_plugins"]) == ("osha", "kiosk", "analytics")
    live = canonical(client.get("/api/openapi.json").json)
    if os.environ.get("EHS_TEST_WRITE_OPENAPI_SNAPSHOT"):
        SNAPSHOT.write_text(live, encoding="utf-8")
    assert live == SNAPSHOT.read_text(encoding="utf-8")
