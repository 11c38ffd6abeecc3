"""The bot's commands, as a chat types them."""

from dataclasses import dataclass

COMMANDS = ("start", "status", "unlink", "language", "help")


@dataclass(frozen=True)
class Command:
    name: str
    args: tuple[str, ...] = ()


def parse_command(text: str | None, bot_username: str) -> Command | None:
    """`/name arg...`, or `/name@bot arg...` as groups write it; None for plain text or another bot's command."""
    if not text or not text.startswith("/"):
        return None
    head, *args = text.split()
    name, _, addressee = head[1:].partition("@")
    if addressee and addressee.lower() != bot_username.lower():
        return None
    return Command(name.lower(), tuple(args))
