"""The watcher's tables and the queries the scanner needs."""
