"""`kernodeck-gateway`: serve the HTTP API with uvicorn, and the internal port when one is configured."""

import asyncio

import uvicorn
import uvloop

from kernodeck_gateway.app import create_app
from kernodeck_gateway.internal import create_internal_app
from kernodeck_gateway.settings import GatewaySettings
from kernodeck_kit.logs import dict_config


def server(app, host: str, port: int, settings: GatewaySettings) -> uvicorn.Server:
    config = uvicorn.Config(
        app,
        http="httptools",
        host=host,
        port=port,
        log_config=dict_config("gateway", settings.log_level),
        access_log=False,
        proxy_headers=False,  # the gateway reads X-Forwarded-For itself, from its trusted proxies only
    )
    return uvicorn.Server(config)


async def serve(settings: GatewaySettings) -> None:
    app = create_app(settings)
    servers = [server(app, settings.host, settings.port, settings)]
    if settings.internal_port:
        internal = create_internal_app(settings, app)
        servers.append(server(internal, settings.internal_host, settings.internal_port, settings))
    await asyncio.gather(*(each.serve() for each in servers))


def main() -> None:
    # The loop uvicorn.run would choose: asyncio's own default costs each request and each AMQP frame more.
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(serve(GatewaySettings()))


if __name__ == "__main__":
    main()
