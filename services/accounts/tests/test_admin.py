import pytest
from sqlalchemy import create_engine, inspect

from kernodeck_accounts import admin

PASSWORD = "correct horse battery staple"


@pytest.fixture
def cli_database(monkeypatch, database_url):
    monkeypatch.setenv("ACCOUNTS_DATABASE_URL", database_url)


def test_grant_and_revoke_operator(accounts, cli_database, capsys):
    accounts.register(
        first_name="Ops", last_name="Lead", email="Ops@Example.com", password=PASSWORD, client_address="203.0.113.10"
    )
    token = accounts.login(email="ops@example.com", password=PASSWORD, client_address="127.0.0.1")["token"]
    assert accounts.resolve_session(token)["is_operator"] is False

    assert admin.main(["grant-operator", " OPS@example.com "]) == 0
    assert "Ops@Example.com" in capsys.readouterr().out
    assert accounts.resolve_session(token)["is_operator"] is True

    assert admin.main(["revoke-operator", "ops@example.com"]) == 0
    assert accounts.resolve_session(token)["is_operator"] is False


def test_an_unknown_email_fails_and_changes_nothing(accounts, cli_database, capsys):
    account = accounts.register(
        first_name="A", last_name="B", email="a@example.com", password=PASSWORD, client_address="203.0.113.10"
    )
    assert admin.main(["grant-operator", "nobody@example.com"]) == 1
    assert "no account with email nobody@example.com" in capsys.readouterr().err
    assert accounts.get_account(account["id"])["is_operator"] is False


@pytest.mark.parametrize("argv", [[], ["grant-operator"], ["make-admin", "a@example.com"]])
def test_bad_usage_exits_with_2(argv):
    with pytest.raises(SystemExit) as caught:
        admin.main(argv)
    assert caught.value.code == 2


def test_it_migrates_a_new_database_first(monkeypatch, tmp_path):
    url = f"sqlite:///{tmp_path / 'accounts.db'}"
    monkeypatch.setenv("ACCOUNTS_DATABASE_URL", url)
    assert admin.main(["revoke-operator", "a@example.com"]) == 1
    engine = create_engine(url)
    assert {"accounts", "sessions", "login_failures"} <= set(inspect(engine).get_table_names())
    engine.dispose()
