"""Settings: the shared keys, the bot's token and Bot API address, the public site, Telegram's limits."""

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from kernodeck_kit.settings import BaseServiceSettings


class NotifySettings(BaseServiceSettings):
    model_config = SettingsConfigDict(env_prefix="NOTIFY_", extra="ignore")

    service_name: str = "notify"
    metrics_port: int = 9106
    # From @BotFather. Never logged: every log line is scrubbed of it.
    bot_token: SecretStr = SecretStr("")
    telegram_api_url: str = "https://api.telegram.org"
    # Where customers open their orders: links in the messages are <public_url>/orders/<id>.
    public_url: str = Field("http://127.0.0.1:8000", validation_alias=AliasChoices("KERNODECK_PUBLIC_URL"))
    # Telegram's documented limits: about 30 messages a second in all, one a second in a chat,
    # 20 a minute in a group.
    max_per_second: int = Field(30, ge=1, le=30)
    chat_interval_s: float = Field(1.0, gt=0)
    group_interval_s: float = Field(3.0, gt=0)
    # Back-off while the Bot API does not answer: doubles from the first to the last, then stays there.
    retry_first_s: float = Field(1.0, gt=0)
    retry_max_s: float = Field(60.0, gt=0)
    request_timeout_s: float = Field(10.0, gt=0)
    poll_timeout_s: int = Field(30, ge=0, le=50)
    # Sent and failed messages stay in the delivery log this long.
    delivery_retention_days: int = Field(90, ge=1)

    @field_validator("telegram_api_url", "public_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value.rstrip("/")

    def token(self) -> str:
        token = self.bot_token.get_secret_value()
        if not token:
            raise SystemExit("NOTIFY_BOT_TOKEN is not set: give notify its bot's token from @BotFather")
        return token
