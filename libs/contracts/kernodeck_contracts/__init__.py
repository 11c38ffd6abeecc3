"""Contracts shared by every Kernodeck service and the gateway."""
