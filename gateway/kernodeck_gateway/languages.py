"""The customer's language, from what the browser sends (Accept-Language, RFC 9110)."""

from kernodeck_contracts.languages import DEFAULT_LANGUAGE, LANGUAGES


def preferred_language(accept_language: str | None) -> str:
    """The supported language the browser ranks highest (by q, then by order); the default when none."""
    ranked = []
    for position, item in enumerate((accept_language or "").split(",")):
        tag, *params = (part.strip() for part in item.split(";"))
        quality = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        language = tag.split("-")[0].lower()
        if language in LANGUAGES and quality > 0:
            ranked.append((-quality, position, language))
    return min(ranked)[2] if ranked else DEFAULT_LANGUAGE
