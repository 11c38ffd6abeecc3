"""What Kernodeck gives customers to download: `diagnostic.py`, the readiness check provisioning runs on each node."""
