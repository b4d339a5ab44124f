"""`ehs_core.db.constant`: a code's own value written into a statement's
text, where a value that would need quoting is refused rather than written."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from ehs_core.db import constant
from ehs_core.incidents.models import Incident, Status


@pytest.mark.parametrize("dialect", [postgresql.dialect(), sqlite.dialect()])
def test_a_constant_is_part_of_the_statements_text(dialect):
    statement = select(Incident.id).where(Incident.status == constant(Status.investigation.value)).limit(
        constant(100))
    compiled = statement.compile(dialect=dialect)
    assert "'investigation'" in str(compiled) and "LIMIT 100" in str(compiled)
    assert "investigation" not in compiled.params.values()


@pytest.mark.parametrize("value", ["it's", "a b", "", "x;--", 1.5, True, None])
def test_anything_that_would_need_quoting_is_refused(value):
    with pytest.raises((TypeError, ValueError)):
        constant(value)
