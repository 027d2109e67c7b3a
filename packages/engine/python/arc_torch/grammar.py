"""Constrained decoding: the output must be one compact JSON value of a schema, between literal text.

The same matcher as the embedded engine's (`src/grammar/json-matcher.ts`), over UTF-8 bytes: states are immutable,
so every candidate token is tried from the same state. With `properties`, object keys come in the schema's order,
each `required` one present and no others (OpenAI's strict mode); strings take any JSON string.
"""

import json

import torch

from .errors import WorkerError


class Matcher:
    """A state: `step(byte)` lists the states after the byte (empty when it is not allowed); `accepts()` says
    whether the output may end here."""

    __slots__ = ("step", "accepts")

    def __init__(self, step, accepts):
        self.step = step
        self.accepts = accepts


END = Matcher(lambda b: [], lambda: True)
NEVER = Matcher(lambda b: [], lambda: False)


def _lazy(build):
    built = []

    def get():
        if not built:
            built.append(build())
        return built[0]

    return Matcher(lambda b: get().step(b), lambda: get().accepts())


def _union(options):
    if len(options) == 1:
        return options[0]
    return Matcher(lambda b: [s for m in options for s in m.step(b)], lambda: any(m.accepts() for m in options))


def _literal(text, k):
    data = text.encode("utf-8")

    def at(i):
        if i == len(data):
            return k
        return Matcher(lambda b: [at(i + 1)] if b == data[i] else [], lambda: False)

    return at(0)


def _is_digit(b):
    return 0x30 <= b <= 0x39


def _is_hex(b):
    return _is_digit(b) or 0x41 <= b <= 0x46 or 0x61 <= b <= 0x66


_ESCAPES = set(b'"\\/bfnrt')


def _string_body(k):
    """A JSON string after its opening quote, then `k`."""
    holder = {}

    def body_step(b):
        if b == 0x22:
            return [k]
        if b == 0x5C:
            return [holder["escaped"]]
        return [] if b < 0x20 else [holder["body"]]

    def hex_digits(left):
        if left == 0:
            return holder["body"]
        return Matcher(lambda b: [hex_digits(left - 1)] if _is_hex(b) else [], lambda: False)

    holder["body"] = Matcher(body_step, lambda: False)
    holder["escaped"] = Matcher(
        lambda b: [hex_digits(4)] if b == 0x75 else ([holder["body"]] if b in _ESCAPES else []), lambda: False
    )
    return holder["body"]


def _number(integer, k):
    """A JSON number (an integer when `integer`), then `k`."""

    def complete(own):
        return Matcher(lambda b: own(b) + k.step(b), k.accepts)

    def pending(own):
        return Matcher(own, lambda: False)

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

    return pending(lambda b: [pending(magnitude)] if b == 0x2D else magnitude(b))


class _SchemaCompiler:
    def __init__(self, root):
        self.root = root

    def value(self, schema, k):
        if schema is True:
            return self.any(k)
        if schema is False:
            return NEVER
        if isinstance(schema.get("$ref"), str):
            ref = schema["$ref"]
            return _lazy(lambda: self.value(self.resolve(ref), k))
        if "const" in schema:
            return _literal(_compact(schema["const"]), k)
        if isinstance(schema.get("enum"), list):
            return _union([_literal(_compact(v), k) for v in schema["enum"]])
        alternatives = schema.get("anyOf", schema.get("oneOf"))
        if isinstance(alternatives, list):
            return _union([self.value(s, k) for s in alternatives])
        kind = schema.get("type")
        if isinstance(kind, list):
            return _union([self.value({**schema, "type": t}, k) for t in kind])
        if kind == "object":
            return self.object(schema, k)
        if kind == "array":
            return self.array(schema.get("items", True), k)
        if kind == "string":
            return _literal('"', _string_body(k))
        if kind in ("number", "integer"):
            return _number(kind == "integer", k)
        if kind == "boolean":
            return _union([_literal("true", k), _literal("false", k)])
        if kind == "null":
            return _literal("null", k)
        if kind is None:
            return self.any(k)
        raise WorkerError(f"grammar: schema type {kind!r} is not one JSON Schema defines")

    def resolve(self, ref):
        if not ref.startswith("#"):
            raise WorkerError(f"grammar: $ref {ref!r}: only local references (#/...) are supported")
        node = self.root
        for part in [p for p in ref[1:].split("/") if p]:
            node = node.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(node, dict) else None
        if node is None:
            raise WorkerError(f"grammar: $ref {ref!r} points at nothing in the schema")
        return node

    def any(self, k):
        return _lazy(
            lambda: _union(
                [
                    self.object({"type": "object"}, k),
                    self.array(True, k),
                    _literal('"', _string_body(k)),
                    _number(False, k),
                    _literal("true", k),
                    _literal("false", k),
                    _literal("null", k),
                ]
            )
        )

    def object(self, schema, k):
        properties = schema.get("properties") or {}
        if properties:
            keys = list(properties)
            required = set(schema.get("required") or [])

            def members(i, first):
                def build():
                    if i == len(keys):
                        return _literal("}", k)
                    key = keys[i]
                    member = _literal(
                        ("" if first else ",") + _compact(key) + ":",
                        self.value(properties[key], members(i + 1, False)),
                    )
                    return member if key in required else _union([member, members(i + 1, first)])

                return _lazy(build)

            return _literal("{", members(0, True))
        values = schema.get("additionalProperties", True)
        if values is None:
            values = True
        holder = {}
        holder["member"] = _lazy(
            lambda: _literal(
                '"',
                _string_body(
                    _literal(":", self.value(values, _union([_literal(",", holder["member"]), _literal("}", k)])))
                ),
            )
        )
        return _literal("{", _union([_literal("}", k), holder["member"]]))

    def array(self, items, k):
        holder = {}
        holder["item"] = _lazy(lambda: self.value(items, _union([_literal(",", holder["item"]), _literal("]", k)])))
        return _literal("[", _union([_literal("]", k), holder["item"]]))


def _compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def grammar_matcher(grammar):
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


def _advance(states, data):
    for b in data:
        states = [s for m in states for s in m.step(b)]
        if not states:
            break
    return states


def _byte_to_unicode():
    """The byte -> printable-character map byte-level BPE vocabularies key their pieces with (GPT-2's): printable
    Latin-1 bytes map to themselves, the rest to U+0100 upwards."""
    out, extra = [], 256
    for b in range(256):
        keep = 33 <= b <= 126 or 161 <= b <= 172 or 174 <= b <= 255
        out.append(chr(b) if keep else chr(extra))
        extra += 0 if keep else 1
    return out


def vocabulary_bytes(tokenizer, vocab_size):
    """The bytes each token id writes, or None for a special token: byte-level BPE pieces through the GPT-2 byte map,
    SentencePiece pieces with `▁` as a space and `<0xNN>` byte fallbacks."""
    if tokenizer is None:
        raise WorkerError("grammar: this checkpoint has no tokenizer transformers reads, so output cannot be constrained")
    decoder = {ch: b for b, ch in enumerate(_byte_to_unicode())}
    special = set(tokenizer.all_special_ids) | {
        i for i, t in getattr(tokenizer, "added_tokens_decoder", {}).items() if getattr(t, "special", False)
    }
    pieces = tokenizer.convert_ids_to_tokens(list(range(min(vocab_size, len(tokenizer)))))
    table = []
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


class GrammarConstraint:
    """Masks, before each token of one sample, every token that would take the output outside the grammar; a
    turn-ending token is allowed only once the output is complete."""

    def __init__(self, grammar, token_bytes, stop_ids):
        self.states = [grammar_matcher(grammar)]
        self.token_bytes = token_bytes
        self.stop_ids = stop_ids

    def mask(self, logits):
        """`logits` [V] with every forbidden token set to -inf (in place)."""
        complete = any(s.accepts() for s in self.states)
        first = {}
        allowed = torch.zeros(logits.shape[0], dtype=torch.bool)
        for i, data in enumerate(self.token_bytes[: logits.shape[0]]):
            if data is None:
                allowed[i] = complete and i in self.stop_ids
                continue
            if not data:
                continue
            ok = first.get(data[0])
            if ok is None:
                ok = first[data[0]] = bool(_advance(self.states, data[:1]))
            allowed[i] = ok and (len(data) == 1 or bool(_advance(self.states, data)))
        logits.masked_fill_(~allowed.to(logits.device), float("-inf"))
        return logits

    def advance(self, token):
        data = self.token_bytes[token] if token < len(self.token_bytes) else None
        if data:
            self.states = _advance(self.states, data)
