"""schemathesis against `/openapi.json`: every documented operation, generated requests, no 5xx and
no response that breaks the document (status, content type, schema)."""
import schemathesis
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance, status_code_conformance

schema = schemathesis.pytest.from_fixture("openapi")


@schemathesis.serializer("application/offset+octet-stream")
def tus_bytes(ctx, value):
    """tus PATCH bodies are raw bytes."""
    return value if isinstance(value, bytes) else str(value).encode()

import pytest


@pytest.fixture(scope="session")
def openapi(stack):
    loaded = schemathesis.openapi.from_url(stack.url + "/openapi.json")
    loaded.config.generation.update(max_examples=15)
    return loaded


@schema.parametrize()
def test_operation(case):
    case.call_and_validate(checks=[not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance])
