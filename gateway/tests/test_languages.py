"""The language a Telegram link greets in, from the browser's Accept-Language."""

import pytest

from kernodeck_gateway.languages import preferred_language

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("header", "language"),
    [
        ("vi-VN,vi;q=0.9,en-US;q=0.8,en;q=0.7", "vi"),
        ("fr-FR, id;q=0.5, en;q=0.4", "id"),
        ("en;q=0.5, vi;q=0.6", "vi"),
        ("id, vi", "id"),  # equal q: the first listed
        ("ID-id", "id"),
        ("vi;q=0, en;q=0.1", "en"),  # q=0 means "not this one"
        ("vi;q=oops, id;q=0.2", "id"),
        ("fr, de", "en"),
        ("*", "en"),
        ("", "en"),
        (None, "en"),
    ],
)
def test_the_highest_ranked_supported_language_or_english(header, language):
    assert preferred_language(header) == language
