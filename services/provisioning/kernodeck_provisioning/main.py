"""`kernodeck-provisioning`: run the provisioning service."""


def main() -> None:
    from kernodeck_kit import green

    green.patch()

    from kernodeck_kit.transport import runner
    from kernodeck_provisioning.config import ProvisioningSettings
    from kernodeck_provisioning.service import ProvisioningService

    runner.run(ProvisioningService, ProvisioningSettings(), "kernodeck_provisioning")


if __name__ == "__main__":
    main()
