"""Constrained decoding: the output must be one compact JSON value of a schema, between literal text.

The same matcher as the embedded engine's (`src/grammar/json-matcher.ts`), over UTF-8 bytes, under the same bounds
(`src/grammar/grammar-bounds.ts`): states are immutable, so every candidate token is tried from the same state; a
schema compiles once per continuation, so alternatives that lead to one place are one state. With `properties`,
object keys come in the schema's order, each `required` one present and no others (OpenAI's strict mode); strings
take any JSON string. A grammar over its bounds, or one that allows no output, raises GrammarError.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, cast

import torch

from .errors import GrammarError, WorkerError

# the bounds of src/grammar/grammar-bounds.ts
MAX_SCHEMA_DEPTH = 64
MAX_GRAMMAR_STATES = 20_000
MAX_LIVE_STATES = 10_000
MAX_MASK_STEPS = 1_000_000


class Matcher:
    """A state that reads one byte: `step(byte)` lists the states after it (empty when it is not allowed);
    `accepts()` says whether the output may end here."""

    __slots__ = ("step", "accepts")

    def __init__(self, step: Callable[[int], Sequence[State]], accepts: Callable[[], bool]) -> None:
        self.step = step
        self.accepts = accepts


class Choice:
    """A state that stands for others (a union, a `$ref`, where an object or array goes on), listed on first use."""

    __slots__ = ("build", "built")

    def __init__(self, build: Callable[[], Sequence[State]]) -> None:
        self.build = build
        self.built: Sequence[State] | None = None

    def choices(self) -> Sequence[State]:
        if self.built is None:
            self.built = self.build()
        return self.built


State = Matcher | Choice
"""A state of the matcher: one that reads a byte, or one that stands for others."""

END = Matcher(lambda b: [], lambda: True)
NEVER = Matcher(lambda b: [], lambda: False)


class _Budget:
    """Counts matcher steps against MAX_MASK_STEPS."""

    __slots__ = ("left",)

    def __init__(self):
        self.left = MAX_MASK_STEPS

    def spend(self, n=1):
        self.left -= n
        if self.left < 0:
            raise GrammarError(f"masking the vocabulary for one token took more than {MAX_MASK_STEPS} matcher steps")


def expand_states(states: Sequence[State], budget: _Budget | None = None) -> list[Matcher]:
    """The byte-reading states `states` stand for, each once; choices are expanded without recursion, so a choice
    that leads back to itself is simply met again."""
    if len(states) == 1 and isinstance(states[0], Matcher):
        return cast(list[Matcher], states)
    seen = set()
    out = []
    stack = list(reversed(states))
    while stack:
        m = stack.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        if len(seen) > MAX_LIVE_STATES:
            raise GrammarError(f"the grammar holds more than {MAX_LIVE_STATES} states at once (the bound on live states)")
        if budget is not None:
            budget.spend()
        if isinstance(m, Choice):
            stack.extend(reversed(m.choices()))
        else:
            out.append(m)
    return out


def step_states(states: Sequence[Matcher], byte: int, budget: _Budget | None = None) -> list[Matcher]:
    """The byte-reading states after `byte`, each once; empty when no state takes it."""
    if budget is not None:
        budget.spend(len(states))
    return expand_states([s for m in states for s in m.step(byte)], budget)


def _union(options):
    distinct = list({id(m): m for m in options}.values())
    if len(distinct) == 1:
        return distinct[0]
    return Choice(lambda: distinct)


def _literal(text, k):
    state = k
    for b in reversed(text.encode("utf-8")):
        state = (lambda byte, after: Matcher(lambda x: after if x == byte else [], lambda: False))(b, [state])
    return state


def _is_digit(b):
    return 0x30 <= b <= 0x39


def _is_hex(b):
    return _is_digit(b) or 0x41 <= b <= 0x46 or 0x61 <= b <= 0x66


_ESCAPES = set(b'"\\/bfnrt')


def _string_body(k):
    """A JSON string after its opening quote, then `k`."""
    holder = {}
    end = [k]

    def body_step(b):
        if b == 0x22:
            return end
        if b == 0x5C:
            return [holder["escaped"]]
        return [] if b < 0x20 else [holder["body"]]

    holder["body"] = Matcher(body_step, lambda: False)
    hex_state = holder["body"]
    for _ in range(4):
        hex_state = (lambda after: Matcher(lambda b: after if _is_hex(b) else [], lambda: False))([hex_state])
    unicode = [hex_state]
    holder["escaped"] = Matcher(
        lambda b: unicode if b == 0x75 else ([holder["body"]] if b in _ESCAPES else []), lambda: False
    )
    return holder["body"]


def _number(integer, k):
    """A JSON number (an integer when `integer`), then `k`."""

    def pending(own):
        return Matcher(own, lambda: False)

    def complete(own):
        options = [pending(own), k]
        return Choice(lambda: options)

    m = {}
    m["exp_digits"] = complete(lambda b: [m["exp_digits"]] if _is_digit(b) else [])
    m["exp_sign"] = pending(lambda b: [m["exp_digits"]] if _is_digit(b) else [])
    m["exp_start"] = pending(
        lambda b: [m["exp_sign"]] if b in (0x2B, 0x2D) else ([m["exp_digits"]] if _is_digit(b) else [])
    )

    def fraction(b):
        if integer:
            return []
        if b == 0x2E:
            return [m["frac_start"]]
        return [m["exp_start"]] if b in (0x65, 0x45) else []

    m["frac_digits"] = complete(
        lambda b: [m["frac_digits"]] if _is_digit(b) else ([m["exp_start"]] if b in (0x65, 0x45) else [])
    )
    m["frac_start"] = pending(lambda b: [m["frac_digits"]] if _is_digit(b) else [])
    m["zero"] = complete(fraction)
    m["digits"] = complete(lambda b: [m["digits"]] if _is_digit(b) else fraction(b))

    def magnitude(b):
        if b == 0x30:
            return [m["zero"]]
        return [m["digits"]] if _is_digit(b) else []

    negative = [pending(magnitude)]
    return pending(lambda b: negative if b == 0x2D else magnitude(b))


def resolve_ref(root: Any, ref: str) -> dict | bool:
    """The schema a local `$ref` (`#/$defs/x`) points at in `root`, or raises GrammarError saying why none."""
    if not ref.startswith("#"):
        raise GrammarError(f"$ref {json.dumps(ref)}: only local references (#/...) are supported")
    node = root
    for part in [p for p in ref[1:].split("/") if p]:
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            node = node.get(key)
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            node = None
    if node is None:
        raise GrammarError(f"$ref {json.dumps(ref)} points at nothing in the schema")
    if not isinstance(node, (dict, bool)):
        raise GrammarError(f"$ref {json.dumps(ref)} points at no schema")
    return node


class _SchemaCompiler:
    def __init__(self, root):
        self.root = root
        self.compiled = {}  # (id(schema), id(k)) -> (schema, k, matcher): each schema once per continuation
        self.plain = {}  # (type, id(k)) -> (k, matcher): values that depend on their schema only by type

    def value(self, schema, k):
        if schema is True:
            return self.any(k)
        if schema is False:
            return NEVER
        key = (id(schema), id(k))
        hit = self.compiled.get(key)
        if hit is None:
            hit = self.compiled[key] = (schema, k, self.compile(schema, k))
        return hit[2]

    def compile(self, schema, k):
        if isinstance(schema.get("$ref"), str):
            target = resolve_ref(self.root, schema["$ref"])
            return Choice(lambda: [self.value(target, k)])
        if "const" in schema:
            return _literal(_compact(schema["const"]), k)
        if isinstance(schema.get("enum"), list):
            return _union([_literal(_compact(v), k) for v in schema["enum"]])
        alternatives = schema.get("anyOf", schema.get("oneOf"))
        if isinstance(alternatives, list):
            return _union([self.value(s, k) for s in alternatives])
        kind = schema.get("type")
        if isinstance(kind, list):
            return _union([self.compile({**schema, "type": t}, k) for t in kind])
        if kind == "object":
            return self.object(schema, k)
        if kind == "array":
            return self.array(schema.get("items", True), k)
        if kind == "string":
            return self.plain_value("string", k, lambda: _literal('"', _string_body(k)))
        if kind in ("number", "integer"):
            return self.plain_value(kind, k, lambda: _number(kind == "integer", k))
        if kind == "boolean":
            return self.plain_value("boolean", k, lambda: _union([_literal("true", k), _literal("false", k)]))
        if kind == "null":
            return self.plain_value("null", k, lambda: _literal("null", k))
        if kind is None:
            return self.any(k)
        raise GrammarError(f"schema type {kind!r} is not one JSON Schema defines")

    def plain_value(self, kind, k, build):
        key = (kind, id(k))
        hit = self.plain.get(key)
        if hit is None:
            hit = self.plain[key] = (k, build())
        return hit[1]

    def any(self, k):
        return self.plain_value(
            "any",
            k,
            lambda: Choice(
                lambda: [self.compile({"type": t}, k) for t in ("object", "array", "string", "number", "boolean", "null")]
            ),
        )

    def object(self, schema, k):
        properties = schema.get("properties") or {}
        if properties:
            keys = list(properties)
            required = set(schema.get("required") or [])
            rest = {}

            def members(i, first):
                if (i, first) in rest:
                    return rest[(i, first)]

                def build():
                    if i == len(keys):
                        return [_literal("}", k)]
                    key = keys[i]
                    member = _literal(
                        ("" if first else ",") + _compact(key) + ":",
                        self.value(properties[key], members(i + 1, False)),
                    )
                    return [member] if key in required else [member, members(i + 1, first)]

                rest[(i, first)] = Choice(build)
                return rest[(i, first)]

            return _literal("{", members(0, True))
        values = schema.get("additionalProperties", True)
        if values is None:
            values = True
        holder = {}
        holder["member"] = Choice(
            lambda: [
                _literal(
                    '"',
                    _string_body(
                        _literal(":", self.value(values, _union([_literal(",", holder["member"]), _literal("}", k)])))
                    ),
                )
            ]
        )
        return _literal("{", _union([_literal("}", k), holder["member"]]))

    def array(self, items, k):
        holder = {}
        holder["item"] = Choice(
            lambda: [self.value(items, _union([_literal(",", holder["item"]), _literal("]", k)]))]
        )
        return _literal("[", _union([_literal("]", k), holder["item"]]))


def _compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


_SCHEMA_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")


def _brief(value):
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _SchemaWalk:
    """Checks a schema as the compiler builds it (src/grammar/schema-check.ts): each schema once per continuation,
    counted against MAX_GRAMMAR_STATES; a `$ref` back to a schema being walked is recursion when an object or array
    lies between and a cycle (refused) when none does; nesting past MAX_SCHEMA_DEPTH is refused."""

    def __init__(self, root, root_path, budget):
        self.root = root
        self.root_path = root_path
        self.budget = budget
        self.frames = []  # (schema, context, path)
        self.visited = set()  # (id(schema), context)
        self.contexts = 0

    def count(self, path, states):
        self.budget[0] += states
        if self.budget[0] > MAX_GRAMMAR_STATES:
            raise GrammarError(
                f"{path}: the request's schemas compile to more than {MAX_GRAMMAR_STATES} grammar states (the bound "
                "on a request's grammar; a $ref counts once for each place it is used)"
            )

    def visit(self, schema, context, path, via=None):
        if isinstance(schema, bool):
            self.count(path, 1)
            return
        if not isinstance(schema, dict):
            raise GrammarError(f"{path}: expected a JSON Schema object, got {_brief(schema)}")
        open_frames = [f for f in self.frames if f[0] is schema]
        loop = next((f for f in open_frames if f[1] == context), None)
        if loop is not None:
            what = f"{via[0]}: {json.dumps(via[1])}" if via else path
            raise GrammarError(
                f"{what} leads back to {loop[2]} with no output in between (a $ref cycle); a schema may refer to "
                "itself only inside an object's properties or an array's items"
            )
        if open_frames or (id(schema), context) in self.visited:
            return
        self.visited.add((id(schema), context))
        self.count(path, 1)
        if len(self.frames) >= MAX_SCHEMA_DEPTH:
            raise GrammarError(
                f"{path}: schemas nested more than {MAX_SCHEMA_DEPTH} deep, $ref hops included (the bound on schema depth)"
            )
        _check_shape(schema, path)
        self.frames.append((schema, context, path))
        self.children(schema, context, path)
        self.frames.pop()

    def children(self, schema, context, path):
        ref = schema.get("$ref")
        if isinstance(ref, str):
            try:
                target = resolve_ref(self.root, ref)
            except GrammarError as error:
                raise GrammarError(f"{path}.$ref: {error}") from None
            pointer = "".join("." + p.replace("~1", "/").replace("~0", "~") for p in ref[1:].split("/") if p)
            self.visit(target, context, self.root_path + pointer, (f"{path}.$ref", ref))
            return
        if "const" in schema:
            return
        if isinstance(schema.get("enum"), list):
            self.count(f"{path}.enum", len(schema["enum"]))
            return
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                for i, sub in enumerate(schema[key]):
                    self.visit(sub, context, f"{path}.{key}[{i}]")
                return
        kinds = schema["type"] if isinstance(schema.get("type"), list) else [schema.get("type")]
        for kind in kinds:
            if kind == "array" and "items" in schema:
                self.contexts += 1
                self.visit(schema["items"], self.contexts, f"{path}.items")
            if kind != "object":
                continue
            properties = schema.get("properties") or {}
            if properties:
                for key, sub in properties.items():
                    self.contexts += 1
                    self.visit(sub, self.contexts, f"{path}.properties.{key}")
            elif "additionalProperties" in schema and schema["additionalProperties"] is not None:
                self.contexts += 1
                self.visit(schema["additionalProperties"], self.contexts, f"{path}.additionalProperties")


def _check_shape(s, path):
    """The fields of one schema the compiler reads, each of the shape it needs."""
    if "$ref" in s and not isinstance(s["$ref"], str):
        raise GrammarError(f"{path}.$ref: expected a string, got {_brief(s['$ref'])}")
    for t in s["type"] if isinstance(s.get("type"), list) else ([] if s.get("type") is None else [s["type"]]):
        if t not in _SCHEMA_TYPES:
            raise GrammarError(f"{path}.type: expected one of {', '.join(_SCHEMA_TYPES)}, got {_brief(t)}")
    if "enum" in s and not isinstance(s["enum"], list):
        raise GrammarError(f"{path}.enum: expected an array, got {_brief(s['enum'])}")
    for key in ("anyOf", "oneOf"):
        if key in s and not isinstance(s[key], list):
            raise GrammarError(f"{path}.{key}: expected an array of schemas")
    if "properties" in s and not isinstance(s["properties"], dict):
        raise GrammarError(f"{path}.properties: expected an object of schemas")
    if "required" in s and not (isinstance(s["required"], list) and all(isinstance(r, str) for r in s["required"])):
        raise GrammarError(f"{path}.required: expected an array of property names")


def check_grammar(grammar: Any, path: str = "grammar", budget: list[int] | None = None) -> None:
    """Raises GrammarError naming the first part of `grammar` that is over its bounds or that the matcher cannot
    follow; the schemas of an `any-of` share one count of grammar states."""
    budget = budget if budget is not None else [0]
    if not isinstance(grammar, dict):
        raise WorkerError(f"{path}: expected an object, got {grammar!r}")
    if grammar.get("kind") == "any-of":
        for i, g in enumerate(grammar.get("grammars") or []):
            check_grammar(g, f"{path}.grammars[{i}]", budget)
        return
    if grammar.get("kind") != "json-schema":
        raise WorkerError(f"{path}.kind: expected json-schema or any-of, got {grammar.get('kind')!r}")
    schema = grammar.get("schema", True)
    _SchemaWalk(schema, f"{path}.schema", budget).visit(schema, 0, f"{path}.schema")


def grammar_matcher(grammar: Any) -> State:
    """The matcher of everything `grammar` (an `OutputGrammar` of the Engine API) allows."""
    if not isinstance(grammar, dict):
        raise WorkerError(f"grammar: expected an object, got {grammar!r}")
    if grammar.get("kind") == "any-of":
        return _union([grammar_matcher(g) for g in grammar.get("grammars") or []])
    if grammar.get("kind") != "json-schema":
        raise WorkerError(f"grammar.kind: expected json-schema or any-of, got {grammar.get('kind')!r}")
    schema = grammar.get("schema", True)
    compiler = _SchemaCompiler(schema)
    return _literal(grammar.get("before") or "", compiler.value(schema, _literal(grammar.get("after") or "", END)))


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
    turn-ending token is allowed only once the output is complete. The grammar is checked against its bounds first;
    masking one token takes at most MAX_MASK_STEPS steps."""

    def __init__(self, grammar: Any, token_bytes: list[bytes | None], stop_ids: set[int] | list[int]) -> None:
        check_grammar(grammar)
        self.states = expand_states([grammar_matcher(grammar)])
        self.token_bytes = token_bytes
        self.vocabulary = _vocabulary(token_bytes)
        self.stop_ids = stop_ids

    def mask(self, logits: torch.Tensor) -> torch.Tensor:
        """`logits` [V] with every forbidden token set to -inf (in place)."""
        size = logits.shape[0]
        allowed = torch.zeros(size, dtype=torch.bool)
        budget = _Budget()
        levels = [self.states]  # levels[d]: the states after the first d bytes of the token in hand
        any_allowed = False
        vocab, table = self.vocabulary, self.token_bytes
        for j, token in enumerate(vocab.order):
            data = cast(bytes, table[token])  # the order lists only tokens that write bytes
            del levels[vocab.shared[j] + 1 :]
            last = levels[-1]
            while last and len(levels) <= len(data):
                last = step_states(last, data[len(levels) - 1], budget)
                levels.append(last)
            if last and token < size:
                allowed[token] = True
                any_allowed = True
        if any(s.accepts() for s in self.states):
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
            self.states = step_states(self.states, b)
