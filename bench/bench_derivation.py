"""Time per deposit-address derivation, per network, over 1,000 indexes.

Run: .venv/bin/python bench/bench_derivation.py
Derivation times are the steady state, the account key already parsed and its
external chain cached; parsing an account key is timed on its own.
"""

import time

from kernodeck_chains.derivation import derive_deposit_address
from kernodeck_chains.hd import parse_extended_public_key
from kernodeck_chains.networks import chain_params

# Published account keys of the "abandon ... about" test mnemonic.
ACCOUNTS = {
    "bitcoin": (
        "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
    ),
    "litecoin": (
        "xpub6CjGURuDpczf6uNrCCwfhVizn5J3hsWcvZ2m6GAdmAjZnoWJPrx6TFPjGSftc2o5fvox6ubQjSXmjjaHZjwYMH7SGFpHHb9Jg24zBf66mbE"
    ),
    "ethereum": (
        "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt"
    ),
    "tron": (
        "xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd"
    ),
}
RUNS = 1_000


def _percentiles(samples: list[int]) -> tuple[int, int]:
    ordered = sorted(samples)
    return ordered[len(ordered) // 2], ordered[len(ordered) * 99 // 100]


def _micros(nanoseconds: int) -> str:
    return f"{nanoseconds // 1000}.{nanoseconds % 1000 // 100} us"


def _time_derivations(network: str, xpub: str) -> list[int]:
    params = chain_params(network, "mainnet")
    derive_deposit_address(network, xpub, 0, params)  # warm the account cache
    samples = []
    for index in range(RUNS):
        start = time.perf_counter_ns()
        derive_deposit_address(network, xpub, index, params)
        samples.append(time.perf_counter_ns() - start)
    return samples


def _time_parses(xpub: str) -> list[int]:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter_ns()
        parse_extended_public_key(xpub)
        samples.append(time.perf_counter_ns() - start)
    return samples


def main() -> None:
    print(f"{'network':<10}{'derive p50':>12}{'derive p99':>12}{'parse p50':>12}   ({RUNS} indexes)")
    for network, xpub in ACCOUNTS.items():
        p50, p99 = _percentiles(_time_derivations(network, xpub))
        parse_p50, _ = _percentiles(_time_parses(xpub))
        print(f"{network:<10}{_micros(p50):>12}{_micros(p99):>12}{_micros(parse_p50):>12}")


if __name__ == "__main__":
    main()
