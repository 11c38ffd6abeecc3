"""`kernodeck-support`: run the support service."""


def main() -> None:
    from kernodeck_kit import green

    green.patch()

    from kernodeck_kit.transport import runner
    from kernodeck_support.config import SupportSettings
    from kernodeck_support.service import SupportService

    runner.run(SupportService, SupportSettings(), "kernodeck_support")


if __name__ == "__main__":
    main()
