"""The watchers' view of payments: every address still inside its monitoring window, page by page."""

import pytest
from nameko.exceptions import RemoteError


def test_watched_addresses_come_in_pages_and_cover_every_intent(payments_ready, new_order):
    payments = payments_ready
    made = {
        payments.create_order_payment("acc-w", new_order("acc-w")["id"], "LTC", "litecoin")["address"] for _ in range(5)
    }
    payments.create_order_payment("acc-w", new_order("acc-w")["id"], "BTC", "bitcoin")

    seen, after, pages = [], None, 0
    while True:
        page = payments.watched_addresses("litecoin", after, 2)
        seen += [entry["address"] for entry in page["addresses"]]
        pages, after = pages + 1, page["next"]
        if after is None:
            break
    assert sorted(seen) == sorted(made)
    assert pages == 3
    entry = payments.watched_addresses("litecoin")["addresses"][0]
    assert set(entry) == {"address", "payment_id", "token", "watch_until", "required_confirmations"}


@pytest.mark.parametrize("limit", [0, 5001, True])
def test_a_page_size_outside_the_bounds_is_refused(payments_ready, limit):
    with pytest.raises(RemoteError) as caught:
        payments_ready.watched_addresses("litecoin", None, limit)
    assert caught.value.code == "validation_error"
