"""Automatic prefix caching across `generate` calls, as vLLM's: the keys and values of a prompt's prefix are kept by
blocks of `block_size` tokens, each found by a hash chained over every token up to its end, so that a later prompt
that begins with the same tokens (an agent's system prompt and tools, sent on every call; a rollout group's shared
prompt) runs only the rest.

Bounded: past `max_bytes`, the least recently used blocks go, a prefix's last blocks before its first ones. Scoped: the
chain starts from the request's cache salt (vLLM's `cache_salt`), so prompts sent with different salts share nothing;
the engine clears the cache whenever its weights change (a training step, `load`, `setWeights`).
"""

import hashlib
from array import array
from collections import OrderedDict
from typing import Any

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer, DynamicSlidingWindowLayer

BLOCK_SIZE = 16
"""Tokens per block: a prefix is cached and reused in whole blocks."""

DEFAULT_MAX_BYTES = 128 * 1024 * 1024
"""The cache's bound when `init` names none (the embedded engine's default too)."""

Block = list[tuple[torch.Tensor, torch.Tensor]]
"""Keys and values of one block of positions, per layer: each [1, kv heads, block_size, head dim]."""


def _full_layers(cache: DynamicCache) -> list[tuple[torch.Tensor, torch.Tensor]] | None:
    """Each layer's keys and values, or None when a layer does not keep every position (a sliding window)."""
    layers = []
    for layer in cache.layers:
        if not isinstance(layer, DynamicLayer) or isinstance(layer, DynamicSlidingWindowLayer):
            return None
        if layer.keys is None or layer.values is None:
            return None
        layers.append((layer.keys, layer.values))
    return layers


class PrefixCache:
    """Blocks of prefixes' keys and values by chained hash, least recently used first, within `max_bytes`."""

    def __init__(self, max_bytes: int, block_size: int = BLOCK_SIZE) -> None:
        self.max_bytes = max_bytes
        self.block_size = block_size
        self.blocks: OrderedDict[bytes, Block] = OrderedDict()  # least recently used first
        self.bytes = 0
        self.hits = 0
        self.reused_tokens = 0
        self.evicted = 0

    def stats(self) -> dict:
        return {"blocks": len(self.blocks), "bytes": self.bytes, "maxBytes": self.max_bytes, "hits": self.hits,
                "reusedTokens": self.reused_tokens, "evicted": self.evicted}

    def clear(self) -> None:
        self.blocks.clear()
        self.bytes = 0

    def _keys(self, tokens: list[int], salt: str) -> list[bytes]:
        """The chained hash of each whole block of `tokens`, from the salt on."""
        keys, parent = [], hashlib.sha256(salt.encode()).digest()
        for start in range(0, len(tokens) - self.block_size + 1, self.block_size):
            block = array("q", tokens[start:start + self.block_size]).tobytes()
            parent = hashlib.sha256(parent + block).digest()
            keys.append(parent)
        return keys

    def _touch(self, keys: list[bytes]) -> None:
        """Marks the blocks as just used, the first block most recently, so that a prefix loses its tail first."""
        for key in reversed(keys):
            self.blocks.move_to_end(key)

    def lookup(self, tokens: list[int], salts: list[str], config: Any) -> tuple[int, DynamicCache | None]:
        """The longest whole-block prefix of `tokens` cached under every one of `salts`: its length and a new cache
        holding its keys and values (None when no block is cached)."""
        chains = [self._keys(tokens, salt) for salt in salts]
        found = min(next((i for i, k in enumerate(chain) if k not in self.blocks), len(chain)) for chain in chains)
        if found == 0:
            return 0, None
        for chain in chains:
            self._touch(chain[:found])
        blocks = [self.blocks[k] for k in chains[0][:found]]
        cache = DynamicCache(config=config)
        for layer in range(len(blocks[0])):
            keys = torch.cat([b[layer][0] for b in blocks], dim=-2)
            values = torch.cat([b[layer][1] for b in blocks], dim=-2)
            cache.update(keys, values, layer)
        self.hits += 1
        self.reused_tokens += found * self.block_size
        return found * self.block_size, cache

    def store(self, tokens: list[int], salts: list[str], cache: DynamicCache) -> None:
        """Keeps the whole blocks of `tokens`, whose keys and values are the first positions of `cache` (one row), under
        each of `salts`; then drops least recently used blocks until the cache is within its bound."""
        layers = _full_layers(cache)
        if layers is None:
            return
        for salt in salts:
            keys = self._keys(tokens, salt)
            for i, key in enumerate(keys):
                if key in self.blocks:
                    continue
                span = slice(i * self.block_size, (i + 1) * self.block_size)
                block = [(k[:, :, span].clone(), v[:, :, span].clone()) for k, v in layers]
                self.blocks[key] = block
                self.bytes += sum(k.nbytes + v.nbytes for k, v in block)
            self._touch(keys)
        while self.bytes > self.max_bytes and self.blocks:
            _, block = self.blocks.popitem(last=False)
            self.bytes -= sum(k.nbytes + v.nbytes for k, v in block)
            self.evicted += 1
