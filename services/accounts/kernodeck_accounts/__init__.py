"""Accounts service: customers, password hashes, sessions, operator role."""
