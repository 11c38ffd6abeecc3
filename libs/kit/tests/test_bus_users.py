"""How `kernodeck-admin broker apply` reaches the management API and what it gives each process to log in with."""

import base64

from kernodeck_kit.bus_users import Management, uri_for


def credentials(api: Management) -> str:
    return base64.b64decode(api.auth.removeprefix("Basic ")).decode()


def test_the_management_user_is_the_urls_or_the_environments_when_the_url_names_none(monkeypatch):
    monkeypatch.setenv("RABBITMQ_USER", "default_user_x")
    monkeypatch.setenv("RABBITMQ_PASSWORD", "a/b+c=")  # as the cluster operator generates them: no URL holds it
    api = Management("https://rabbitmq.kernodeck.svc:15671")
    assert (api.base, credentials(api)) == ("https://rabbitmq.kernodeck.svc:15671", "default_user_x:a/b+c=")
    api = Management("http://guest:gu%40st@127.0.0.1:15672/")
    assert (api.base, credentials(api)) == ("http://127.0.0.1:15672", "guest:gu@st")


def test_each_process_logs_in_as_its_own_user_on_the_same_broker_and_vhost():
    base = "amqps://guest:guest@rabbitmq:5671/kernodeck?heartbeat=30"
    assert uri_for(base, "watcher-bitcoin", "p@ss/word") == (
        "amqps://kernodeck-watcher-bitcoin:p%40ss%2Fword@rabbitmq:5671/kernodeck?heartbeat=30"
    )
