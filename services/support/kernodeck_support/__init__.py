"""Kernodeck support: customers' requests about their orders, operators' answers, extensions."""
