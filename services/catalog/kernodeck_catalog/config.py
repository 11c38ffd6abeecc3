"""Settings and the operator's catalog file."""

import tomllib
from pathlib import Path

from pydantic_settings import SettingsConfigDict

from kernodeck_catalog.domain import Catalog, GpuModel, Preparation
from kernodeck_contracts.money import parse_usd
from kernodeck_kit.settings import ServiceSettings

DEFAULT_CATALOG = Path(__file__).with_name("catalog.toml")


class CatalogSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="CATALOG_", extra="ignore")

    service_name: str = "catalog"
    metrics_port: int = 9101
    config_path: Path = DEFAULT_CATALOG


def load_catalog_file(path: Path) -> Catalog:
    """Parse and check the file; a broken file stops the service at start."""
    with path.open("rb") as handle:
        raw = tomllib.load(handle)
    models = {}
    for entry in raw.get("models", []):
        model = GpuModel(
            id=entry["id"],
            name=entry["name"],
            vendor=entry["vendor"],
            backend=entry["backend"],
            memory_gb_per_gpu=int(entry["memory_gb_per_gpu"]),
            gpus_per_lot=int(entry["gpus_per_lot"]),
            lot_prices_cents={int(days): parse_usd(price) for days, price in entry["lot_prices_usd"].items()},
            available_lots=int(entry.get("initial_available_lots", 0)),
            unsupported_preparations=tuple(entry.get("unsupported_preparations", ())),
        )
        if model.id in models:
            raise ValueError(f"model {model.id} appears twice in {path}")
        models[model.id] = model
    preparations = {p["id"]: Preparation(p["id"], p["name"], p["description"]) for p in raw.get("preparations", [])}
    if not models or not preparations:
        raise ValueError(f"{path} must list at least one model and one preparation")
    return Catalog(models=models, preparations=preparations)
