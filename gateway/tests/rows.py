"""Rows as the services answer them over RPC, for the gateway's offline tests."""


def payment_row(**changes) -> dict:
    return {
        "id": "p1",
        "purpose": "order",
        "order_id": "o1",
        "topup_id": None,
        "account_id": "a1",
        "asset": "ETH",
        "network": "ethereum",
        "address": "0x52908400098527886E0F7030069857D2E4169EE7",
        "amount_base_units": 32_500_000_000_000_000,
        "amount": "0.0325",
        "amount_usd_cents": 10000,
        "rate": "3076.92",
        "uri": "ethereum:0x52908400098527886E0F7030069857D2E4169EE7?value=32500000000000000",
        "expires_at": "2025-01-01T01:00:00Z",
        "status": "confirming",
        "reported_at": None,
        "received_base_units": 32_500_000_000_000_001,
        "received_amount": "0.032500000000000001",
        "confirmed_base_units": 1,
        "confirmed_amount": "0.000000000000000001",
        "required_confirmations": 12,
        "transfers": [
            {
                "txid": "0xabc",
                "index": 0,
                "amount_base_units": 32_500_000_000_000_001,
                "amount": "0.032500000000000001",
                "confirmations": 3,
                "state": "confirming",
            }
        ],
        "created_at": "2025-01-01T00:00:00Z",
        **changes,
    }


def order_row(**changes) -> dict:
    return {
        "id": "o1",
        "account_id": "a1",
        "status": "awaiting_payment",
        "summary": {
            "model": "h100",
            "model_name": "H100",
            "backend": "cuda",
            "duration_days": 7,
            "lots": 1,
            "gpus_per_lot": 8,
            "total_gpus": 8,
            "preparation": "ubuntu",
            "lot_price_usd_cents": 10000,
            "total_usd_cents": 10000,
        },
        "created_at": "2025-01-01T00:00:00Z",
        "updated_at": "2025-01-01T00:00:00Z",
        "timeline": [],
        "rental": None,
        "access": None,
        **changes,
    }
