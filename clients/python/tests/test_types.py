"""``Client.declare_types`` (POST /v1/types, docs/api.md#declared-types) against the built service as a
real process (see conftest.py): the declarations read back through the documented read of declared
types, ``ocelog export`` (the service has no GET for them), the record and its idempotency key through
``ocelog replay``, a lost answer retried as recorded once, and bad declarations refused with the
problem+json field and rule."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid

import pytest

import ocelog
from conftest import Service
from scripted import Drop, Reply, Request, ScriptedServer

PAY_ORDER = {"name": "pay order", "attributes": [{"name": "amount", "type": "float"}]}
WAREHOUSE = {"name": "warehouse", "attributes": [{"name": "capacity", "type": "integer"}]}


def declared_records(service: Service, dataset_id: str):
    return [r for r in service.replay(dataset_id) if r["type"] == "TypesDeclared"]


def exported_declarations(service: Service, dataset_id: str):
    """The OCEL 2.0 JSON ``eventTypes`` and ``objectTypes`` of ``ocelog export`` (it brings the read models up to date first)."""
    log = json.loads(service.cli(["export", "--dataset", dataset_id, "--format", "json"]))
    return log["eventTypes"], log["objectTypes"]


def test_declared_types_are_exported_with_their_attributes_and_merge(service, key):
    with ocelog.Client(key["key"], service.url) as client:
        first = client.declare_types([PAY_ORDER], [WAREHOUSE])
        # Declared again: `amount` takes the later type and `method` joins it.
        later = client.declare_types(event_types=[{"name": "pay order", "attributes": [{"name": "amount", "type": "integer"}, {"name": "method", "type": "string"}]}])
    assert first == {"success": True, "event_types": 1, "object_types": 1, "duplicate": False}
    assert later == {"success": True, "event_types": 1, "object_types": 0, "duplicate": False}
    event_types, object_types = exported_declarations(service, key["dataset_id"])
    assert event_types == [{"name": "pay order", "attributes": [{"name": "amount", "type": "integer"}, {"name": "method", "type": "string"}]}]
    assert object_types == [WAREHOUSE]


def test_the_same_key_records_once_and_other_content_under_it_raises_conflict(service, key):
    with ocelog.Client(key["key"], service.url) as client:
        first = client.declare_types([PAY_ORDER], idempotency_key="py-types-1")
        again = client.declare_types([PAY_ORDER], idempotency_key="py-types-1")
        with pytest.raises(ocelog.ConflictError) as caught:
            client.declare_types(object_types=[WAREHOUSE], idempotency_key="py-types-1")
        unkeyed = client.declare_types(object_types=[WAREHOUSE])
    assert (first["duplicate"], again["duplicate"], unkeyed["duplicate"]) == (False, True, False)
    assert caught.value.status == 409
    assert [e.path for e in caught.value.errors] == ["/idempotency_key"]
    keys = [r["idempotency_key"] for r in declared_records(service, key["dataset_id"])]
    assert keys[0] == "py-types-1" and len(keys) == 2
    assert uuid.UUID(keys[1]).version == 4  # the client's own key for the unkeyed call


def test_an_answer_lost_after_the_service_recorded_the_declaration_is_retried_under_the_same_key(service, key):
    """A proxy in front of the real service passes the first request on and then drops the connection, as a
    network failure after the commit would: the client retries with the same idempotency key, the
    service answers it as first recorded (duplicate), and the log holds one TypesDeclared record."""

    def forward(request: Request) -> Reply:
        data = json.dumps(request.body).encode()
        headers = {"Authorization": request.headers["authorization"], "Content-Type": "application/json"}
        try:
            with urllib.request.urlopen(urllib.request.Request(service.url + request.path, data=data, headers=headers, method=request.method), timeout=10) as r:
                return Reply(r.status, json.loads(r.read()))
        except urllib.error.HTTPError as error:
            return Reply(error.code, json.loads(error.read()), {"Content-Type": "application/problem+json"})

    def forward_then_drop(request: Request) -> Drop:
        forward(request)
        return Drop()

    notices = []
    with ScriptedServer([forward_then_drop], default=forward) as proxy:
        with ocelog.Client(key["key"], proxy.url, backoff_base=0.01, backoff_max=0.05, on_retry=notices.append) as client:
            answer = client.declare_types([PAY_ORDER], [WAREHOUSE])
    assert answer == {"success": True, "event_types": 1, "object_types": 1, "duplicate": True}
    assert [(n.cause, n.path, n.status) for n in notices] == [("network", "/v1/types", None)]
    sent = [r.body["idempotency_key"] for r in proxy.requests]
    assert len(sent) == 2 and sent[0] == sent[1]
    assert [r["idempotency_key"] for r in declared_records(service, key["dataset_id"])] == [sent[0]]


@pytest.mark.parametrize(
    ("event_types", "object_types", "path", "rule"),
    [
        ([{"name": "", "attributes": []}], None, "/event_types/0/name", "event type name: 1 to 200 characters"),
        ([{"name": "pay order", "attributes": [{"name": "paid at", "type": "date"}]}], None, "/event_types/0/attributes/0/type", "one of OCEL 2.0's"),
        (None, [WAREHOUSE, WAREHOUSE], "/object_types/1/name", '"warehouse" is declared twice (also /object_types/0)'),
        (None, [{"name": "warehouse"}], "/object_types/0/attributes", "is required"),
        (None, None, "", "declares no type"),
    ],
)
def test_a_bad_declaration_raises_validation_error_with_the_field_and_rule_and_records_nothing(service, key, event_types, object_types, path, rule):
    with ocelog.Client(key["key"], service.url) as client:
        with pytest.raises(ocelog.ValidationError) as caught:
            client.declare_types(event_types, object_types)
    error = caught.value
    assert (error.status, error.problem["status"]) == (422, 422)
    assert error.message.startswith("POST /v1/types: 422 ")
    assert any(e.path == path and rule in e.message for e in error.errors), error.errors
    assert declared_records(service, key["dataset_id"]) == []


def test_a_declaration_outside_its_list_raises_type_error_before_anything_is_sent():
    with ScriptedServer() as server:
        client = ocelog.Client("k", server.url)
        with pytest.raises(TypeError, match=r"^event_types: expected a list of declarations"):
            client.declare_types(PAY_ORDER)
        with pytest.raises(TypeError, match=r"^object_types\[1\]: a declaration must be a dict"):
            client.declare_types(object_types=[WAREHOUSE, "truck"])
    assert server.requests == []
