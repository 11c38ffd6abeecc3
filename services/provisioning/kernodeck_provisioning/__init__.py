"""Provisioning service: GPU nodes, capacity held before payment, delivery over SSH, the rental term."""
