"""Event handlers that never drop an event."""

from nameko.events import event_handler


def consumer(source: str, event_type: str):
    """Handle `source`.`event_type`, requeueing the message when the handler fails.

    nameko acknowledges a message whose handler raised, which would lose it;
    here it goes back to the queue and is tried again (handlers are
    idempotent, so a retry after a partial failure is safe). A handler that
    can never succeed keeps failing loudly in the logs and metrics instead of
    dropping money on the floor.
    """
    return event_handler(source, event_type, requeue_on_error=True)
