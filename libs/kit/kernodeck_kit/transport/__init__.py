"""How the services talk over RabbitMQ: nameko's entrypoints and dependency providers as the kit sets them up,
the outbox's publishing, calls between services, and the runner that starts a service.

Where this departs from nameko's, kombu's or py-amqp's public API, bench/bench_transport.py measures it against
that API in the same run and fails when it stops paying:

- rpc.Rpc replies on a connection of the service's own, encoded once and without publisher confirms ("rpc
  replies");
- publish.publishing_connection declines connection.blocked notices ("events published");
- events.BatchQueueConsumer hands a batching handler its events from the consumer's green thread ("batches
  handed over").

The versions these are measured on are pinned in libs/kit/pyproject.toml (the `service` extra), in one place.
"""
