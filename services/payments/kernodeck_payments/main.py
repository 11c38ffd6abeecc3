"""`kernodeck-payments`: run the payments service."""


def main() -> None:
    from kernodeck_kit import green

    green.patch()

    from kernodeck_kit import runner
    from kernodeck_payments.config import PaymentsSettings
    from kernodeck_payments.service import PaymentsService

    runner.run(PaymentsService, PaymentsSettings(), "kernodeck_payments")


if __name__ == "__main__":
    main()
