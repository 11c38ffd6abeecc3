import pytest

from kernodeck_contracts.text import printable, unstorable, unstorable_fields


@pytest.mark.parametrize("text", ["a\x00b", "\x00", "lone \ud800", "lone \udfff"])
def test_nul_and_lone_surrogates_are_unstorable(text):
    assert unstorable(text)


@pytest.mark.parametrize("text", ["", "plain", "\x01 and \x7f", "Nguyễn 😀", "\ud7ff\ue000"])
def test_other_text_is_storable(text):
    assert not unstorable(text)


def test_every_unstorable_string_or_key_is_named_by_its_path():
    value = {"ok": "x", "name": "a\x00", "items": [1, "b", {"deep": "\ud800"}], "k\x00": "fine", "n": None}
    assert unstorable_fields(value) == ["name", "items.2.deep", "k\\x00"]
    assert unstorable_fields(("ok", "\x00"), "args") == ["args.1"]
    assert unstorable_fields("\x00", "message") == ["message"]
    assert unstorable_fields(12) == []


def test_printable_escapes_what_it_cannot_show():
    assert printable("a\x00b\ud800") == "a\\x00b\\ud800"
