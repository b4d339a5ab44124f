"""`ehs_core.db`: `constant`, a code's own value written into a statement's
text, where a value that would need quoting is refused rather than written;
an autocommit read leaves no transaction open; a retried request forgets
its failed attempt."""

from __future__ import annotations

import os

import pytest
from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from ehs_core.db import constant, make_engine
from ehs_core.incidents.models import Incident, Status

PG = os.environ.get("EHS_TEST_POSTGRES_URL")
POSTGRES_ONLY = pytest.mark.skipif(not PG, reason="needs EHS_TEST_POSTGRES_URL")


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


@POSTGRES_ONLY
def test_a_transaction_left_open_on_an_autocommit_read_is_rolled_back_when_it_ends():
    """The autocommit engine's pool does not roll back what it gets back
    (there is nothing to roll back after autocommit statements); a
    transaction opened explicitly is rolled back as the request ends. (Reads
    run in autocommit on PostgreSQL only.)"""
    from pyramid.request import Request

    from ehs_core.db import AutocommitReads

    engine = make_engine({"sqlalchemy.url": PG}, isolation_level="AUTOCOMMIT", pool_reset_on_return=None)
    request = Request.blank("/")
    reads = AutocommitReads(request, engine)
    driver = reads.connection.connection.driver_connection
    reads.connection.exec_driver_sql("BEGIN")
    reads.connection.exec_driver_sql("SELECT 1")
    assert driver.pgconn.transaction_status != 0
    request._process_finished_callbacks()
    assert driver.pgconn.transaction_status == 0
    engine.dispose()


def test_a_request_run_again_forgets_what_its_failed_attempt_read(registry):
    """pyramid_retry runs a failed request again with the same environ, as a
    new request: what the first attempt read and decided (its caller, the
    workflow's moves of an incident, reference data it wrote, a plugin's
    cases) lives on that request, so the next attempt reads it all again,
    and checks a transition against the incident as it is then; what the
    WSGI server put in the environ (the proxy's address) stays."""
    from pyramid.request import Request, apply_request_extensions

    environ = Request.blank("/api/incidents/1/transitions", method="POST").environ
    environ["ehs.proxy_addr"] = "10.0.0.7"

    def attempt() -> Request:
        request = Request(environ)
        request.registry = registry
        apply_request_extensions(request)
        return request

    first = attempt()
    first.caller.settle(None)
    first.workflow_moves[(1, "investigation")] = []
    first.reference_data_changed = True
    first.osha_cases_read[1] = []
    second = attempt()
    assert not second.caller.known
    assert second.workflow_moves == {}
    assert second.reference_data_changed is False
    assert second.osha_cases_read == {}
    assert second.proxy_address == "10.0.0.7"
    assert [key for key in environ if key.startswith("ehs.")] == ["ehs.proxy_addr"]
