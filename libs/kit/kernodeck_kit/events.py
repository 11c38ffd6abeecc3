"""Event handlers that never drop an event, and never spin on one that fails."""

import eventlet
from nameko.events import EventHandler

RETRY_PAUSE_KEY = "EVENT_RETRY_PAUSE_S"
DEFAULT_RETRY_PAUSE_S = 1.0


class RequeueingEventHandler(EventHandler):
    """nameko's event handler with `requeue_on_error`, pausing before each requeue.

    nameko acknowledges a message whose handler raised, which would lose it;
    here it goes back to the queue and is tried again (handlers are
    idempotent, so a retry after a partial failure is safe). The worker waits
    before it requeues, so a handler that can never succeed is retried about
    once per pause and per worker, loudly in the logs and metrics, instead of
    as fast as the broker redelivers, and a failing dependency (a database
    down) slows consumption rather than burning the CPU.
    """

    def setup(self):
        super().setup()
        self.retry_pause_s = float(self.container.config.get(RETRY_PAUSE_KEY, DEFAULT_RETRY_PAUSE_S))

    def handle_result(self, message, worker_ctx, result=None, exc_info=None):
        if exc_info is not None:
            eventlet.sleep(self.retry_pause_s)
        return super().handle_result(message, worker_ctx, result, exc_info)


def consumer(source: str, event_type: str):
    """Handle `source`.`event_type`, requeueing the message after a pause when the handler fails."""
    return RequeueingEventHandler.decorator(source, event_type, requeue_on_error=True)
