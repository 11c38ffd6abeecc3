"""Calls between services on the real broker: a ServiceError arrives with its code, field errors and retry
delay; a peer that is missing or does not answer becomes SERVICE_UNAVAILABLE, never a hung worker."""

import eventlet
import pytest
from nameko.standalone.rpc import ClusterRpcProxy

from kernodeck_contracts.clients import ServiceClient
from kernodeck_contracts.clients.base import rpc_method
from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_kit.transport.calls import RemoteServiceError, call_service, print_answer
from kernodeck_kit.transport.peers import on_cluster
from kernodeck_kit.transport.rpc import rpc


class Refuser:
    name = "refuser"

    @rpc
    def refuse(self, retry_after=None):
        raise ServiceError(ErrorCode.TOO_MANY_REQUESTS, "slow down", [{"field": "n", "message": "big"}], retry_after)

    @rpc
    def answer(self, value):
        return {"value": value}

    @rpc
    def stall(self):
        eventlet.sleep(30)


class RefuserClient(ServiceClient):
    service = "refuser"

    @rpc_method
    def refuse(self) -> dict: ...

    @rpc_method
    def answer(self, *, value: str) -> dict: ...


@pytest.fixture
def refuser(container_factory, rabbit_config):
    container_factory(Refuser, rabbit_config).start()
    with ClusterRpcProxy(rabbit_config, timeout=30) as cluster:
        yield cluster


def test_a_service_error_arrives_with_its_code_field_errors_and_retry_delay(refuser):
    with pytest.raises(RemoteServiceError) as remote:
        refuser.refuser.refuse(retry_after=7)
    assert (remote.value.code, remote.value.retry_after) == ("too_many_requests", 7)
    with pytest.raises(ServiceError) as refused:
        call_service(refuser.refuser.refuse)
    assert refused.value.code == ErrorCode.TOO_MANY_REQUESTS
    assert refused.value.errors == [{"field": "n", "message": "big"}]
    assert refused.value.retry_after is None


def test_a_missing_or_silent_peer_is_service_unavailable(refuser):
    with pytest.raises(ServiceError) as missing:
        call_service(refuser.nobody.anything)
    assert missing.value.code == ErrorCode.SERVICE_UNAVAILABLE
    with pytest.raises(ServiceError) as silent:
        call_service(refuser.refuser.stall, timeout=0.5)
    assert silent.value.code == ErrorCode.SERVICE_UNAVAILABLE
    assert call_service(refuser.refuser.answer, 1) == {"value": 1}


def test_an_operator_command_prints_the_answer_or_the_refusal(refuser, capsys):
    client = on_cluster(refuser, RefuserClient)
    assert print_answer(lambda: client.answer(value="ok")) == 0
    assert '"value": "ok"' in capsys.readouterr().out
    assert print_answer(client.refuse) == 1
    assert capsys.readouterr().err.strip() == "refused (too_many_requests): n: big"
