"""The eventlet side of bench/bench_transport.py, in a process of its own on the vhost it is given: echo
services for the RPC rounds (`serve`), and the publishing and batching rounds (`publish`, `batches`), each
printing its figures as one line of JSON.

    python bench/transport_services.py serve AMQP_URI
    python bench/transport_services.py publish|batches AMQP_URI ROUNDS EVENTS
"""

from kernodeck_kit import green

green.patch()

import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402

import eventlet  # noqa: E402
import eventlet.event  # noqa: E402
import eventlet.tpool  # noqa: E402
from kombu import Connection  # noqa: E402
from nameko import rpc as nameko_rpc  # noqa: E402
from nameko.containers import ServiceContainer  # noqa: E402
from nameko.messaging import QueueConsumer  # noqa: E402

from kernodeck_kit.outbox import Emitted  # noqa: E402
from kernodeck_kit.transport import events, rpc  # noqa: E402
from kernodeck_kit.transport.publish import AmqpPublisher  # noqa: E402

# --- RPC: the kit's entrypoint and nameko's ------------------------------------------------------------------


def echo_service(name: str, entrypoint):
    return type(name, (), {"name": name, "echo": entrypoint(lambda self, value: value)})


class Meter:
    """The process's CPU seconds so far, asked before and after each round of calls."""

    name = "bench_meter"

    @rpc.rpc
    def cpu(self):
        return time.process_time()


ECHO_SERVICES = {
    "nameko": echo_service("echo_nameko", nameko_rpc.rpc),
    "kit": echo_service("echo_kit", rpc.rpc),
}


def serve(config: dict) -> None:
    containers = [ServiceContainer(cls, config) for cls in (Meter, *ECHO_SERVICES.values())]
    for container in containers:
        container.start()
    print(json.dumps({"ready": {variant: cls.name for variant, cls in ECHO_SERVICES.items()}}), flush=True)
    eventlet.tpool.execute(sys.stdin.read)  # until the bench closes our stdin
    for container in containers:
        container.stop()


# --- publishing: the outbox's events on a connection that declines connection.blocked, and on kombu's own ----


def publish(config: dict, rounds: int, count: int) -> None:
    uri = config["AMQP_URI"]
    with Connection(uri) as connection:  # a queue that receives the events, so that they are routed
        channel = connection.channel()
        channel.exchange_declare("bench.events", "topic", durable=True, auto_delete=False)
        channel.queue_declare("bench-events", durable=False, auto_delete=False)
        channel.queue_bind("bench-events", "bench.events", "#")
        publishers = {"kit": AmqpPublisher(uri), "kombu": AmqpPublisher(uri, connect=Connection)}
        seconds = {variant: [] for variant in publishers}
        for n in range(rounds + 1):  # the first round opens the connections and is not counted
            for variant, publisher in order(publishers, n):
                rows = events_of(count)
                started = time.process_time()
                published = publisher.many(rows)
                elapsed = time.process_time() - started
                assert len(published.confirmed) == count, published
                if n:
                    seconds[variant].append(elapsed)
            channel.queue_purge("bench-events")
        for publisher in publishers.values():
            publisher.close()
    print(json.dumps(seconds), flush=True)


# --- batches: events handed to a batching handler from the consumer's green thread, or through nameko's ------


class SpawningBatchConsumer(events.BatchQueueConsumer):
    def handle_message(self, provider, body, message):
        QueueConsumer.handle_message(self, provider, body, message)


class SpawningBatchingEventHandler(events.BatchingEventHandler):
    queue_consumer = SpawningBatchConsumer()


batch_events = 0
handled: dict[str, int] = {}
all_handled = eventlet.event.Event()


def batching_service(name: str, handler):
    def on_happened(self, payloads):
        handled[name] += len(payloads)
        if handled[name] == batch_events:
            all_handled.send()

    decorated = handler.decorator("bench", "happened", requeue_on_error=True)(on_happened)
    return type(name, (), {"name": name, "on_happened": decorated})


BATCHING_SERVICES = {
    "kit": batching_service("batch_kit", events.BatchingEventHandler),
    "nameko": batching_service("batch_spawning", SpawningBatchingEventHandler),
}


def batches(config: dict, rounds: int, count: int) -> None:
    """Each round: `count` events wait in each service's queue; a service starts and takes them all."""
    global all_handled, batch_events
    batch_events = count
    for cls in BATCHING_SERVICES.values():  # declares its queue
        container = ServiceContainer(cls, config)
        container.start()
        container.stop()
    publisher = AmqpPublisher(config["AMQP_URI"])
    figures = {variant: {"cpu_s": []} for variant in BATCHING_SERVICES}
    for n in range(rounds):
        assert len(publisher.many(events_of(count)).confirmed) == count
        for variant, cls in order(BATCHING_SERVICES, n):
            handled[cls.name], all_handled = 0, eventlet.event.Event()
            container = ServiceContainer(cls, config)
            container.start()  # returns once the consumer consumes
            cpu = time.process_time()
            all_handled.wait()
            figures[variant]["cpu_s"].append(time.process_time() - cpu)
            container.stop()
    publisher.close()
    print(json.dumps(figures), flush=True)


def events_of(count: int) -> list[Emitted]:
    return [Emitted(uuid.uuid4().hex, "bench", "happened", json.dumps({"n": n}), id=n) for n in range(count)]


def order(variants: dict, n: int) -> list:
    """The variants, in turn first from one round to the next, so that the machine's load weighs on each alike."""
    items = list(variants.items())
    return items if n % 2 == 0 else items[::-1]


if __name__ == "__main__":
    command, uri = sys.argv[1], sys.argv[2]
    config = {"AMQP_URI": uri, "serializer": "json"}
    if command == "serve":
        serve(config)
    else:
        {"publish": publish, "batches": batches}[command](config, int(sys.argv[3]), int(sys.argv[4]))
