"""`kernodeck-accounts`: run the accounts service."""


def main() -> None:
    from kernodeck_kit import green

    green.patch()

    from kernodeck_accounts.config import AccountsSettings
    from kernodeck_accounts.service import AccountsService
    from kernodeck_kit.transport import runner

    runner.run(AccountsService, AccountsSettings(), "kernodeck_accounts")


if __name__ == "__main__":
    main()
