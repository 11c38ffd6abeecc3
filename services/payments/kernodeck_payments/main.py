"""`kernodeck-payments`: run the payments service."""


def main() -> None:
    from kernodeck_kit import green

    green.patch()

    from kernodeck_kit.transport import runner
    from kernodeck_payments.account_keys import PrivateKeyConfigured
    from kernodeck_payments.config import PaymentsSettings
    from kernodeck_payments.service import PaymentsService

    try:
        settings = PaymentsSettings()
    except PrivateKeyConfigured as refused:
        raise SystemExit(f"kernodeck-payments will not start: {refused}") from None
    settings.unusable_keys()  # logged now; their methods stay disabled, the others run
    runner.run(PaymentsService, settings, "kernodeck_payments")


if __name__ == "__main__":
    main()
