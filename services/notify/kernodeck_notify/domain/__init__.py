"""Notify's rules, without I/O: what is told, linking chats, commands, pacing under Telegram's limits."""
