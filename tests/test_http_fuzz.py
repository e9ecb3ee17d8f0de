"""`POST /memory/context` fuzzed from its own OpenAPI schema (schemathesis, in process).

Requests inside the schema and outside it: never a 5xx, every response as documented.
Schemathesis's "schema-valid data is accepted" check is left out: the schema cannot say
"at least one non-blank of tool, task, signature_source", so such a request may rightly
get a 422 with its reason.
The engine behind the app is made on the first request (the schema is loaded when the
module is collected), over a vault holding one known failure and its lesson.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from poimen.http import create_app


class _Engine:
    """The engine, made when the app first uses it."""

    def __init__(self):
        self._engine, self.root = None, None

    def __getattr__(self, name):
        if self._engine is None:
            from poimen.engine import Engine

            self.root = Path(tempfile.mkdtemp(prefix="poimen-fuzz-"))
            self._engine = Engine(self.root / "vault", project="fuzz")
            evidence = self._engine.ingest("npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable "
                                           "to resolve dependency tree\n").evidence_sha
            self._engine.remember("L1", "ERESOLVE with react 18: pin react-dom to 18.2",
                                  parents=[evidence])
        return getattr(self._engine, name)


ENGINE = _Engine()
schema = schemathesis.openapi.from_asgi("/openapi.json",
                                        create_app(ENGINE, loopback_only=False))


@schema.parametrize()
@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_request_gets_a_server_error_or_an_undocumented_answer(case):
    response = case.call()
    assert response.status_code < 500, response.text[:500]
    case.validate_response(response, excluded_checks=[positive_data_acceptance])


def teardown_module():
    if ENGINE.root is not None:
        shutil.rmtree(ENGINE.root, ignore_errors=True)
