"""Chain primitives: encodings, hashes, BIP32 public derivation, address rules, payment URIs, EVM log topics."""
