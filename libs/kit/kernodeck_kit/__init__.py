"""Platform kit shared by every Kernodeck service."""
