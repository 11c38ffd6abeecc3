"""Public keys for the tests (their private halves were thrown away)."""

USER_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPzSG/3ZP1jzZwkekc82Z7QtIgu6B7K47s+Zg55txzQv"
HOST_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE6gEmQXkcV0sEMiJ2mZ7Di8NCSNZfvLu5uPxPs724BB"
