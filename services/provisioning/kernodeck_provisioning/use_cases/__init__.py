"""Provisioning's use cases, on its unit of work (`unit.ProvisioningUnit`: the SQL one in the service, plain objects
in tests): `capacity` (holds and what the catalog is told), `allocation` (orders copied, cancelled, paid),
`delivery` (on a node, and what a failed one left there), `term` (warnings, end, extensions), `inventory` (nodes
and their checks), `access` (SSH keys and what a customer logs in with) and `upkeep` (what the sweep timer does).

Every change to the GPUs of a model happens with that model locked (`get_model(..., lock=True)`), so two workers
never hand out the same GPU; the SQL store's unique (node, GPU) claim is the second guard. Work on a node (SSH,
minutes) happens between transactions, never inside one.
"""
