"""A tiny nameko service for the RPC client tests, run in its own process.

Its name comes from ECHO_SERVICE_NAME so that concurrent test runs on one
broker do not share a queue; ECHO_ENTRYPOINT=kit has it answer through the kit's
`rpc` entrypoint (kernodeck_kit.transport.rpc), which every service uses, rather
than nameko's.
"""

import os
import time

from nameko import rpc as nameko_rpc
from nameko.extensions import DependencyProvider

from kernodeck_kit.transport import rpc as kit_rpc

rpc = kit_rpc.rpc if os.environ.get("ECHO_ENTRYPOINT") == "kit" else nameko_rpc.rpc


class Refused(Exception):
    """A service-side error whose args the caller must see."""


class CallIdStack(DependencyProvider):
    def get_dependency(self, worker_ctx):
        return worker_ctx.call_id_stack


class EchoService:
    name = os.environ["ECHO_SERVICE_NAME"]

    call_id_stack = CallIdStack()

    @rpc
    def echo(self, x):
        return x

    @rpc
    def add(self, a, b):
        return a + b

    @rpc
    def fail(self, *args):
        raise Refused(*args)

    @rpc
    def slow(self, seconds):
        time.sleep(seconds)  # green: `nameko run` monkey-patches
        return seconds

    @rpc
    def type_names(self, *args):
        return [type(arg).__name__ for arg in args]

    @rpc
    def call_ids(self):
        return self.call_id_stack
