"""Payments' use cases, each family on its unit of work (a Protocol beside it: the SQL one in store/units.py for
the service, plain objects in tests/memory.py): `intake` (opening a payment intent), `settlement` (chain
transfers in, intents reconciled, the sweep), `balance` (orders and extensions paid from the balance) and
`refunds` (money an order or an extension could not use, back to the balance, under the order's lock).

No RPC happens inside a unit: what another service must say is asked before, or after, the transaction.
"""
