from datetime import UTC, datetime, timedelta
from fractions import Fraction

import pytest

from kernodeck_payments.rates.domain import Judgement, NoRate, Rate, RatePolicy, choose_rate, judge_rate

pytestmark = pytest.mark.unit

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
POLICY = RatePolicy(max_age=timedelta(minutes=5), min_sources=1)  # one source is enough for most rules here
CROSS_CHECKED = RatePolicy(max_age=timedelta(minutes=5), min_sources=2, max_spread=Fraction(2, 100))


def rate(usd: str, source: str = "kraken", age: timedelta = timedelta(0), symbol: str = "BTC") -> Rate:
    return Rate(symbol, usd, source, NOW - age)


def test_the_first_fresh_observation_in_priority_order_wins():
    observations = [rate("64000", "kraken"), rate("64100", "coingecko")]
    assert choose_rate("BTC", observations, NOW, POLICY) == observations[0]


def test_a_stale_first_source_gives_way_to_the_next_fresh_one():
    observations = [rate("64000", "kraken", age=timedelta(minutes=6)), rate("64100", "coingecko")]
    assert choose_rate("BTC", observations, NOW, POLICY).source == "coingecko"


def test_an_observation_exactly_max_age_old_is_fresh():
    exactly = rate("64000", age=POLICY.max_age)
    assert choose_rate("BTC", [exactly], NOW, POLICY) == exactly


def test_an_observation_a_microsecond_past_max_age_is_stale():
    stale = rate("64000", age=POLICY.max_age + timedelta(microseconds=1))
    assert choose_rate("BTC", [stale], NOW, POLICY) is None


def test_a_timestamp_within_the_clock_skew_is_fresh():
    ahead = rate("64000", age=-POLICY.max_clock_skew)
    assert choose_rate("BTC", [ahead], NOW, POLICY) == ahead


def test_a_timestamp_further_in_the_future_is_not_trusted():
    future = rate("64000", "kraken", age=-(POLICY.max_clock_skew + timedelta(microseconds=1)))
    assert choose_rate("BTC", [future], NOW, POLICY) is None
    assert choose_rate("BTC", [future, rate("64100", "coingecko")], NOW, POLICY).source == "coingecko"


def test_no_observation_is_no_rate():
    assert choose_rate("BTC", [], NOW, POLICY) is None


def test_observations_of_another_symbol_are_refused():
    with pytest.raises(ValueError, match="another symbol"):
        choose_rate("BTC", [rate("3000", symbol="ETH")], NOW, POLICY)


@pytest.mark.parametrize("usd", ["0.98", "0.999", "1", "1.02"])
def test_a_stablecoin_within_the_guard_is_quoted_at_exactly_the_peg(usd):
    observed = rate(usd, "kraken", age=timedelta(minutes=1), symbol="USDT")
    chosen = choose_rate("USDT", [observed], NOW, POLICY)
    assert (chosen.usd, chosen.price, chosen.source, chosen.as_of) == ("1", Fraction(1), "peg(kraken)", observed.as_of)


@pytest.mark.parametrize("usd", ["0.9799999", "1.0200001", "0.5"])
def test_a_depegged_stablecoin_has_no_rate(usd):
    assert choose_rate("USDC", [rate(usd, symbol="USDC")], NOW, POLICY) is None


def test_a_lower_priority_source_does_not_overrule_a_depeg():
    observations = [rate("0.95", "kraken", symbol="USDT"), rate("1", "coingecko", symbol="USDT")]
    assert choose_rate("USDT", observations, NOW, POLICY) is None


def test_a_stale_depeg_gives_way_to_a_fresh_observation_at_the_peg():
    observations = [
        rate("0.95", "kraken", age=timedelta(minutes=6), symbol="USDT"),
        rate("0.995", "coingecko", symbol="USDT"),
    ]
    assert choose_rate("USDT", observations, NOW, POLICY).source == "peg(coingecko)"


def test_a_stale_stablecoin_has_no_rate():
    assert choose_rate("USDT", [rate("1", age=timedelta(minutes=6), symbol="USDT")], NOW, POLICY) is None


def test_a_coin_outside_the_stable_set_is_never_pegged():
    observed = rate("1.01", symbol="TRX")
    assert choose_rate("TRX", [observed], NOW, POLICY) == observed


def test_two_fresh_sources_within_the_spread_give_the_first_ones_rate():
    observations = [rate("64000", "kraken"), rate("65280", "coingecko")]  # 2.0 % apart: at the bound
    assert choose_rate("BTC", observations, NOW, CROSS_CHECKED) == observations[0]


def test_two_fresh_sources_further_apart_than_the_spread_give_no_rate():
    observations = [rate("64000", "kraken"), rate("65280.01", "coingecko")]  # just past 2 %
    assert judge_rate("BTC", observations, NOW, CROSS_CHECKED) == Judgement(None, NoRate.SOURCES_DISAGREE)
    assert judge_rate("BTC", observations[::-1], NOW, CROSS_CHECKED).why_none == NoRate.SOURCES_DISAGREE


def test_one_fresh_source_alone_is_not_trusted_when_two_are_asked():
    one = [rate("64000", "kraken"), rate("64100", "coingecko", age=timedelta(minutes=6))]
    assert judge_rate("BTC", one, NOW, CROSS_CHECKED) == Judgement(None, NoRate.TOO_FEW_SOURCES)
    assert judge_rate("BTC", one[:1], NOW, POLICY).rate == one[0]


def test_a_wild_third_source_spoils_the_rate():
    observations = [rate("64000", "kraken"), rate("64100", "coingecko"), rate("6400", "file")]
    assert judge_rate("BTC", observations, NOW, CROSS_CHECKED).why_none == NoRate.SOURCES_DISAGREE


def test_no_fresh_observation_says_so():
    assert (
        judge_rate("BTC", [rate("64000", age=timedelta(minutes=6))], NOW, CROSS_CHECKED).why_none == NoRate.NONE_FRESH
    )


def test_a_stablecoin_is_pegged_only_while_every_fresh_source_is_near_the_peg():
    near = [rate("1", "kraken", symbol="USDT"), rate("0.99", "coingecko", symbol="USDT")]
    assert choose_rate("USDT", near, NOW, CROSS_CHECKED).usd == "1"
    off = RatePolicy(max_age=timedelta(minutes=5), max_spread=Fraction(10, 100))  # a spread wide enough to pass
    apart = [rate("1", "kraken", symbol="USDT"), rate("0.97", "coingecko", symbol="USDT")]
    assert judge_rate("USDT", apart, NOW, off) == Judgement(None, NoRate.OFF_PEG)


def test_the_price_is_exact():
    assert rate("64123.45").price == Fraction(6412345, 100)


@pytest.mark.parametrize(
    "fields",
    [
        {"symbol": "DOGE"},
        {"usd": "64123.450"},  # not canonical
        {"usd": "6.4e4"},
        {"usd": "0"},
        {"as_of": datetime(2025, 3, 1, 12, 0)},  # naive
    ],
)
def test_a_rate_refuses_bad_fields(fields):
    with pytest.raises(ValueError):
        Rate(**{"symbol": "BTC", "usd": "64000", "source": "kraken", "as_of": NOW, **fields})


@pytest.mark.parametrize(
    "fields",
    [
        {"max_age": timedelta(0)},
        {"peg_guard": Fraction(-1, 100)},
        {"peg_guard": Fraction(1)},
        {"min_sources": 0},
        {"max_spread": Fraction(-1, 100)},
        {"max_spread": Fraction(1)},
    ],
)
def test_a_policy_refuses_bad_settings(fields):
    with pytest.raises(ValueError):
        RatePolicy(**{"max_age": timedelta(minutes=5), **fields})
