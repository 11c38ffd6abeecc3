"""`kernodeck-catalog`: run the catalog service."""


def main() -> None:
    from kernodeck_kit import green

    green.patch()

    from kernodeck_catalog.config import CatalogSettings, load_catalog_file
    from kernodeck_catalog.service import CatalogService
    from kernodeck_catalog.store import seed
    from kernodeck_kit.transport import runner

    settings = CatalogSettings()
    catalog = load_catalog_file(settings.config_path)
    runner.run(CatalogService, settings, "kernodeck_catalog", prepare=lambda url: seed(url, catalog))


if __name__ == "__main__":
    main()
