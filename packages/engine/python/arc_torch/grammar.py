"""Constrained decoding: the output follows a grammar program, compiled once by the caller.

The program is what `src/grammar/grammar-program.ts` compiles a request's grammar (JSON Schemas between literal
text) to: a recursive transition network over UTF-8 bytes, whose nodes read a byte, split, call a value's rule or
return from it. `GrammarMachine` follows it exactly as the embedded engine's `src/grammar/grammar-machine.ts` does,
under the same bounds (`src/grammar/grammar-bounds.ts`), so both engines follow one grammar. A program that is not
well formed raises WorkerError naming the node; a grammar over its bounds, or one that allows no output, raises
GrammarError.
"""

from __future__ import annotations

from typing import Any, cast

import torch

from .errors import GrammarError, WorkerError

# the bounds of src/grammar/grammar-bounds.ts
MAX_PROGRAM_NODES = 250_000
MAX_CALL_STACKS = 1_000_000
MAX_LIVE_STATES = 10_000
MAX_MASK_STEPS = 1_000_000

# node kinds (a node's first number), as in src/grammar/grammar-program.ts
BYTES, SPLIT, CALL, RETURN = 0, 1, 2, 3


def parse_program(program: Any, path: str = "grammar") -> list[list[int]]:
    """The nodes of `program` (`{start, nodes}`) with its start node appended as a SPLIT, checked: every node of a
    known kind and shape, every index in range, every byte range in 0..255 and in order."""
    if not isinstance(program, dict) or not isinstance(program.get("nodes"), list):
        raise WorkerError(f"{path}: expected a grammar program {{start, nodes}}, got {type(program).__name__}")
    nodes = program["nodes"]
    size = len(nodes)
    if size > MAX_PROGRAM_NODES:
        raise GrammarError(f"{path}: the grammar compiles to more than {MAX_PROGRAM_NODES} nodes")
    start = program.get("start")

    def index(value: Any, where: str) -> int:
        if type(value) is not int or not 0 <= value < size:
            raise WorkerError(f"{where}: expected a node index in [0, {size}), got {value!r}")
        return value

    index(start, f"{path}.start")
    for i, node in enumerate(nodes):
        where = f"{path}.nodes[{i}]"
        kind = node[0] if isinstance(node, list) and node else None
        if kind == BYTES and (len(node) - 1) % 3 == 0:
            for j in range(1, len(node), 3):
                lo, hi = node[j], node[j + 1]
                if type(lo) is not int or type(hi) is not int or not 0 <= lo <= hi <= 255:
                    raise WorkerError(f"{where}: expected byte ranges lo <= hi in [0, 255], got {lo!r}, {hi!r}")
                index(node[j + 2], where)
        elif kind == SPLIT:
            for target in node[1:]:
                index(target, where)
        elif kind == CALL and len(node) == 3:
            index(node[1], where)
            index(node[2], where)
        elif not (kind == RETURN and len(node) == 1):
            raise WorkerError(f"{where}: expected a node [0, lo, hi, to, ...], [1, ...to], [2, entry, ret] or [3]")
    return nodes + [[SPLIT, start]]


class _Stack:
    """The calls open at a state: the node each returns to, innermost first. Equal stacks are one object."""

    __slots__ = ("id", "ret", "parent", "children", "expansions")

    def __init__(self, id: int, ret: int, parent: _Stack | None) -> None:
        self.id = id
        self.ret = ret
        self.parent = parent
        self.children: dict[int, _Stack] = {}
        self.expansions: dict[int, LiveStates] = {}  # what a node reached by a byte stands for with this stack


class LiveStates:
    """Where the output may be after the bytes read so far: the byte-reading nodes with the calls open at each, and
    whether the output may end here. States the machine keeps (see `GrammarMachine._expand_one`) fill in `next`,
    the states after each byte, as they are met."""

    __slots__ = ("nodes", "stacks", "accepts", "next")

    def __init__(self, nodes: list[int], stacks: list[_Stack | None], accepts: bool) -> None:
        self.nodes = nodes
        self.stacks = stacks
        self.accepts = accepts
        self.next: list[LiveStates | None] | None = None

    def alive(self) -> bool:
        """Whether any output goes on from here (or ends here)."""
        return self.accepts or bool(self.nodes)


_DEAD = LiveStates([], [], False)

KEPT_EXPANSIONS = 10_000
"""The most states a machine keeps with their steps, as src/grammar/grammar-machine.ts keeps them."""


class _Budget:
    """Counts matcher steps against MAX_MASK_STEPS."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = MAX_MASK_STEPS

    def spend(self, n: int = 1) -> None:
        self.left -= n
        if self.left < 0:
            raise GrammarError(f"masking the vocabulary for one token took more than {MAX_MASK_STEPS} matcher steps")


class GrammarMachine:
    """Follows a parsed grammar program (`parse_program`) over UTF-8 bytes, as src/grammar/grammar-machine.ts does."""

    def __init__(self, nodes: list[list[int]]) -> None:
        self.nodes = nodes
        self.tables: list[list[int] | None] = [None] * len(nodes)  # for nodes of several byte ranges: next by byte
        self.roots: dict[int, _Stack] = {}
        self.stacks_made = 0
        self.root_expansions: dict[int, LiveStates] = {}  # the same as a stack's `expansions`, with no call open
        self.expansions_kept = 0

    def start(self) -> LiveStates:
        """The states before the first byte of the output."""
        return self.expand([len(self.nodes) - 1], [None])

    def step(self, states: LiveStates, byte: int, budget: _Budget | None = None) -> LiveStates:
        """The states after `byte`; dead (see `LiveStates.alive`) when no state takes it."""
        kept = states.next
        if kept is not None:
            known = kept[byte]
            if known is not None:
                if budget is not None:
                    budget.spend(len(states.nodes))
                return known
        if len(states.nodes) == 1:
            if budget is not None:
                budget.spend()
            node = states.nodes[0]
            to = self._target(node, byte)
            after = _DEAD if to < 0 else self._expand_one(to, states.stacks[0], budget)
        else:
            nodes, stacks = [], []
            for node, stack in zip(states.nodes, states.stacks):
                if budget is not None:
                    budget.spend()
                to = self._target(node, byte)
                if to >= 0:
                    nodes.append(to)
                    stacks.append(stack)
            if not nodes:
                after = _DEAD
            elif len(nodes) == 1:
                after = self._expand_one(nodes[0], stacks[0], budget)
            else:
                after = self.expand(nodes, stacks, budget)
        if kept is not None:
            kept[byte] = after
        return after

    def _expand_one(self, node: int, stack: _Stack | None, budget: _Budget | None) -> LiveStates:
        """`expand` of one node and its stack, kept with its steps: most steps go from one state to one met before."""
        kept = stack.expansions if stack is not None else self.root_expansions
        states = kept.get(node)
        if states is None:
            states = self.expand([node], [stack], budget)
            if self.expansions_kept < KEPT_EXPANSIONS:
                self.expansions_kept += 1
                kept_next: list[LiveStates | None] = [None] * 256
                states.next = kept_next
                kept[node] = states
        return states

    def expand(self, nodes: list[int], stacks: list[_Stack | None], budget: _Budget | None = None) -> LiveStates:
        """The byte-reading states that `nodes` (with `stacks`) stand for, each once: splits followed, calls entered,
        returns taken; a return with no call open is the end of the output. GrammarError past MAX_LIVE_STATES."""
        size = len(self.nodes)
        seen: set[int] = set()
        out: list[int] = []
        out_stacks: list[_Stack | None] = []
        accepts = False
        pending = nodes[::-1]
        pending_stacks = stacks[::-1]
        while pending:
            node = pending.pop()
            stack = pending_stacks.pop()
            key = (stack.id if stack else 0) * size + node
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > MAX_LIVE_STATES:
                raise GrammarError(
                    f"the grammar holds more than {MAX_LIVE_STATES} states at once (the bound on live states)"
                )
            if budget is not None:
                budget.spend()
            n = self.nodes[node]
            kind = n[0]
            if kind == BYTES:
                out.append(node)
                out_stacks.append(stack)
            elif kind == SPLIT:
                for i in range(len(n) - 1, 0, -1):
                    pending.append(n[i])
                    pending_stacks.append(stack)
            elif kind == CALL:
                pending.append(n[1])
                pending_stacks.append(self._push(stack, n[2]))
            elif stack is not None:
                pending.append(stack.ret)
                pending_stacks.append(stack.parent)
            else:
                accepts = True
        return LiveStates(out, out_stacks, accepts)

    def _push(self, stack: _Stack | None, ret: int) -> _Stack:
        """`stack` with one more call open, returning to `ret`."""
        siblings = stack.children if stack is not None else self.roots
        child = siblings.get(ret)
        if child is None:
            if self.stacks_made >= MAX_CALL_STACKS:
                raise GrammarError(
                    f"the grammar opened more than {MAX_CALL_STACKS} different nestings of values (the bound on "
                    "call stacks)"
                )
            self.stacks_made += 1
            child = siblings[ret] = _Stack(self.stacks_made, ret, stack)
        return child

    def _target(self, node: int, byte: int) -> int:
        """Where byte-reading node `node` goes on `byte`, or -1: one range read directly, several through a table."""
        n = self.nodes[node]
        if len(n) == 4:
            return n[3] if n[1] <= byte <= n[2] else -1
        table = self.tables[node]
        if table is None:
            table = [-1] * 256
            for j in range(1, len(n), 3):
                for b in range(n[j], n[j + 1] + 1):
                    table[b] = n[j + 2]
            self.tables[node] = table
        return table[byte]


def _byte_to_unicode():
    """The byte -> printable-character map byte-level BPE vocabularies key their pieces with (GPT-2's): printable
    Latin-1 bytes map to themselves, the rest to U+0100 upwards."""
    out, extra = [], 256
    for b in range(256):
        keep = 33 <= b <= 126 or 161 <= b <= 172 or 174 <= b <= 255
        out.append(chr(b) if keep else chr(extra))
        extra += 0 if keep else 1
    return out


def vocabulary_bytes(tokenizer: Any, vocab_size: int) -> list[bytes | None]:
    """The bytes each token id writes, or None for a special token: byte-level BPE pieces through the GPT-2 byte map,
    SentencePiece pieces with `▁` as a space and `<0xNN>` byte fallbacks."""
    if tokenizer is None:
        raise WorkerError("grammar: this checkpoint has no tokenizer transformers reads, so output cannot be constrained")
    decoder = {ch: b for b, ch in enumerate(_byte_to_unicode())}
    special = set(tokenizer.all_special_ids) | {
        i for i, t in getattr(tokenizer, "added_tokens_decoder", {}).items() if getattr(t, "special", False)
    }
    pieces = tokenizer.convert_ids_to_tokens(list(range(min(vocab_size, len(tokenizer)))))
    table: list[bytes | None] = []
    for i, piece in enumerate(pieces):
        if i in special or piece is None:
            table.append(None)
        elif all(ch in decoder for ch in piece):
            table.append(bytes(decoder[ch] for ch in piece))
        elif piece.startswith("<0x") and piece.endswith(">") and len(piece) == 6:
            table.append(bytes([int(piece[3:5], 16)]))
        else:
            table.append(piece.replace("\u2581", " ").encode("utf-8"))
    table.extend([None] * (vocab_size - len(table)))
    return table


class _Vocabulary:
    """A vocabulary as constrained decoding walks it (src/grammar/token-vocabulary.ts): the ids of tokens that
    write text sorted by their bytes, each with the length of the prefix it shares with the one before, so the
    grammar steps once per distinct prefix."""

    def __init__(self, token_bytes):
        text = sorted((i for i, b in enumerate(token_bytes) if b), key=lambda i: token_bytes[i])
        self.order = text
        self.shared = [0] * len(text)
        for j in range(1, len(text)):
            a, b = token_bytes[text[j - 1]], token_bytes[text[j]]
            n = 0
            while n < len(a) and n < len(b) and a[n] == b[n]:
                n += 1
            self.shared[j] = n
        self.special = [i for i, b in enumerate(token_bytes) if b is None]


_vocabularies = {}  # id(token_bytes) -> (token_bytes, _Vocabulary): built once per engine's table


def _vocabulary(token_bytes):
    hit = _vocabularies.get(id(token_bytes))
    if hit is None or hit[0] is not token_bytes:
        hit = _vocabularies[id(token_bytes)] = (token_bytes, _Vocabulary(token_bytes))
    return hit[1]


class GrammarConstraint:
    """Masks, before each token of one sample, every token that would take the output outside the grammar; a
    turn-ending token is allowed only once the output is complete. Masking one token takes at most MAX_MASK_STEPS
    steps."""

    def __init__(self, nodes: list[list[int]], token_bytes: list[bytes | None], stop_ids: set[int] | list[int]) -> None:
        self.machine = GrammarMachine(nodes)
        self.states = self.machine.start()
        self.token_bytes = token_bytes
        self.vocabulary = _vocabulary(token_bytes)
        self.stop_ids = stop_ids

    def mask(self, logits: torch.Tensor) -> torch.Tensor:
        """`logits` [V] with every forbidden token set to -inf (in place)."""
        size = logits.shape[0]
        allowed = torch.zeros(size, dtype=torch.bool)
        budget = _Budget()
        step = self.machine.step
        levels = [self.states]  # levels[d]: the states after the first d bytes of the token in hand
        any_allowed = False
        vocab, table = self.vocabulary, self.token_bytes
        for j, token in enumerate(vocab.order):
            data = cast(bytes, table[token])  # the order lists only tokens that write bytes
            del levels[vocab.shared[j] + 1 :]
            last = levels[-1]
            while (last.nodes or last.accepts) and len(levels) <= len(data):
                last = step(last, data[len(levels) - 1], budget)
                levels.append(last)
            if (last.nodes or last.accepts) and token < size:
                allowed[token] = True
                any_allowed = True
        if self.states.accepts:
            for token in vocab.special:
                if token < size and token in self.stop_ids:
                    allowed[token] = True
                    any_allowed = True
        if not any_allowed:
            raise GrammarError("the grammar allows no token of the vocabulary here (it matches no output)")
        logits.masked_fill_(~allowed.to(logits.device), float("-inf"))
        return logits

    def advance(self, token: int) -> None:
        data = self.token_bytes[token] if token < len(self.token_bytes) else None
        for b in data or b"":
            self.states = self.machine.step(self.states, b)
