"""Chain watchers: one process per network, reading the network's own node API."""
