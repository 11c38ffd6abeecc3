"""TLS to the broker, as production runs it (amqps only): a RabbitMQ node of the suite's own with a TLS
listener and a certificate from a CA made here. A service given amqps:// and that CA (AMQP_CA_FILE) answers
RPCs and publishes its events over it; without the CA, or with a host name the certificate does not name,
the kit refuses the connection rather than talk to a broker it cannot check."""

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from kombu import Connection

from kernodeck_kit.settings import ServiceSettings, amqp_ssl
from tests.faults.servers import own_broker


def certificates(directory: Path) -> dict[str, Path]:
    """A CA and the broker's certificate for localhost, signed by it (openssl, as an operator would)."""
    files = {name: directory / f"{name}.pem" for name in ("ca", "ca-key", "cert", "key")}

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=kernodeck test CA",
            "-keyout", str(files["ca-key"]), "-out", str(files["ca"]))  # fmt: skip
    request = directory / "broker.csr"
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", str(files["key"]),
            "-out", str(request))  # fmt: skip
    extensions = directory / "san.cnf"
    extensions.write_text("subjectAltName=DNS:localhost\n")
    openssl("x509", "-req", "-in", str(request), "-CA", str(files["ca"]), "-CAkey", str(files["ca-key"]),
            "-CAcreateserial", "-days", "2", "-extfile", str(extensions), "-out", str(files["cert"]))  # fmt: skip
    for path in files.values():
        path.chmod(0o644)
    return files


@pytest.fixture(scope="module")
def tls_broker():
    directory = Path(tempfile.mkdtemp(prefix="kd-tls-"))  # the rabbitmq user reads the files: not pytest's
    directory.chmod(0o755)
    try:
        files = certificates(directory)
        with own_broker(tls={"cacertfile": files["ca"], "certfile": files["cert"], "keyfile": files["key"]}) as broker:
            yield broker, files["ca"]
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def connects(uri: str) -> bool:
    try:
        with Connection(uri, ssl=amqp_ssl(uri), connect_timeout=10) as connection:
            connection.connect()
            connection.channel().exchange_declare("kernodeck.tls-check", "fanout", durable=False, auto_delete=True)
        return True
    except Exception:  # any refusal (certificate, host name) is the answer here
        return False


def test_the_broker_is_reached_over_tls_only_with_its_ca_and_its_name(tls_broker, monkeypatch):
    broker, ca = tls_broker
    uri = f"amqps://guest:guest@localhost:{broker.tls_port}/"
    monkeypatch.setenv("AMQP_CA_FILE", str(ca))
    assert connects(uri)
    config = ServiceSettings(service_name="tls-check", amqp_uri=uri).nameko_config()
    assert config["AMQP_SSL"] == {
        "context": {"cafile": str(ca), "check_hostname": True},
        "server_hostname": "localhost",
    }
    # The same certificate, asked for under a name it does not give: refused.
    assert not connects(f"amqps://guest:guest@127.0.0.1:{broker.tls_port}/")
    # Without the CA, the system's CAs do not know this broker: refused.
    monkeypatch.delenv("AMQP_CA_FILE")
    assert not connects(uri)
