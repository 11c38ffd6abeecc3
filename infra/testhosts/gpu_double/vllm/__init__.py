"""GPU DOUBLE, NOT vLLM: stands for the inference toolkit of a node image on the test hosts."""

__version__ = "0+kernodeck.gpu-double"
