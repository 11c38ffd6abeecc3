"""Orders service: orders with their price snapshot, the status machine, the timeline."""
