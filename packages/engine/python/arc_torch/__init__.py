"""Arc's PyTorch engine worker (see PROTOCOL.md)."""
