"""`kernodeck-gateway`: serve the HTTP API with uvicorn."""

import uvicorn

from kernodeck_gateway.app import create_app
from kernodeck_gateway.settings import GatewaySettings
from kernodeck_kit.logs import dict_config


def main() -> None:
    settings = GatewaySettings()
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_config=dict_config("gateway", settings.log_level),
        access_log=False,
        proxy_headers=False,  # the gateway reads X-Forwarded-For itself, from its trusted proxies only
    )


if __name__ == "__main__":
    main()
