"""The languages customers read Kernodeck in: the web frontend, the API's links and the Telegram bot."""

LANGUAGES = ("en", "vi", "id")  # English, Vietnamese, Indonesian
DEFAULT_LANGUAGE = "en"
