"""Notify: tells customers on Telegram about their orders, payments, top-ups and rentals."""
