"""repro-lint: find and fix the hidden randomness that makes PyTorch training runs irreproducible."""
