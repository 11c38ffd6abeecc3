"""Catalog service: GPU models, lot prices, preparations, quotes, availability."""
