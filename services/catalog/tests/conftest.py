import pytest

from kernodeck_catalog.config import DEFAULT_CATALOG, load_catalog_file
from kernodeck_catalog.store import seed
from kernodeck_kit.testing import service_config, truncate_all


@pytest.fixture(scope="session")
def catalog_file():
    return load_catalog_file(DEFAULT_CATALOG)


@pytest.fixture(scope="session")
def database_url(pg_database):
    return pg_database("kernodeck_catalog")


@pytest.fixture
def config(rabbit_config, database_url, catalog_file):
    truncate_all(database_url)
    seed(database_url, catalog_file)
    return service_config(rabbit_config, database_url)
