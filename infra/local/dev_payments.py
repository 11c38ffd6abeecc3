"""Development settings for payments: regtest chains, public test keys, local rates.

Used by `make run`, the end-to-end tests and the benchmarks only; a real
deployment sets PAYMENTS_* itself (see .env.example). The keys belong to the
public "abandon ... about" test mnemonic: anyone can spend from them, which
is fine on regtest and fatal anywhere else.
"""

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

TEST_VPUB = (
    "vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc"
)
TEST_ETHEREUM_XPUB = (
    "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt"
)
TEST_TRON_XPUB = (
    "xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd"
)
# Round development prices, USD per whole unit.
DEV_RATES = {"BTC": "50000", "ETH": "2500", "USDT": "1", "USDC": "1", "TRX": "0.25", "SOL": "150", "LTC": "100"}


def dev_payments_env(rates_file: Path) -> dict[str, str]:
    return {
        "PAYMENTS_BITCOIN_CHAIN": "regtest",
        "PAYMENTS_LITECOIN_CHAIN": "regtest",
        "PAYMENTS_ETHEREUM_CHAIN": "regtest",
        "PAYMENTS_TRON_CHAIN": "regtest",
        "PAYMENTS_SOLANA_CHAIN": "regtest",
        "PAYMENTS_ETHEREUM_CHAIN_ID": "31337",
        "PAYMENTS_BITCOIN_XPUB": TEST_VPUB,
        "PAYMENTS_LITECOIN_XPUB": TEST_VPUB,
        "PAYMENTS_ETHEREUM_XPUB": TEST_ETHEREUM_XPUB,
        "PAYMENTS_TRON_XPUB": TEST_TRON_XPUB,
        "PAYMENTS_RATE_SOURCES": "file",
        "PAYMENTS_RATE_FILE": str(rates_file),
        "PAYMENTS_RATE_MIN_SOURCES": "1",  # the development rates file is the one source, on purpose
        "PAYMENTS_RATE_REFRESH_S": "5",
    }


def write_dev_rates(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"as_of": datetime.now(UTC).isoformat(), "rates": DEV_RATES}))


def keep_dev_rates_fresh(path: Path, every_s: float = 60.0) -> threading.Event:
    """Rewrite the rates file now and every `every_s` seconds until the returned event is set."""
    stop = threading.Event()
    write_dev_rates(path)

    def loop() -> None:
        while not stop.wait(every_s):
            write_dev_rates(path)

    threading.Thread(target=loop, daemon=True, name="dev-rates").start()
    return stop
