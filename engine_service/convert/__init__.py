"""Proto <-> core conversion: shared part in `base`, one converter module per game."""
