"""Exchange rates: USD per whole unit of each asset, from public sources or an operator's file."""
