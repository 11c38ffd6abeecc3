"""The watcher's rules, without I/O: transfer states, reorganisations, lag, back-off."""
