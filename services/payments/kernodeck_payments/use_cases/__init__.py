"""Payments' use cases, each family on its unit of work (a Protocol beside it: the SQL one in store/units.py for
the service, plain objects in tests/memory.py): `instructions` (what an order's or an extension's payment needs
first: the order payable, its GPUs held), `intake` (opening a payment intent, a top-up with its own; the Solana
pool watched), `settlement` (chain transfers in, intents reconciled, the sweep), `reporting` ("J'ai payé"),
`balance` (orders and extensions paid from the balance), `refunds` (money an order or an extension could not use,
back to the balance, under the order's lock), `reviews` (operators' decisions), `methods` (operators' switches),
`copies` (payments' copies of orders and extensions), `watchers` (their status, a balance their transfers do not
explain) and `rates` (exchange rates refreshed).

No RPC happens inside a unit: what another service must say is asked before, or after, the transaction.
"""
