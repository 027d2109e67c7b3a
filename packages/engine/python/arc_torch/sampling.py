"""Batched generation with a KV cache: every sample of every request is one left-padded row.

Each row draws from its own seeded generator (one uniform per token, even when greedy), so its tokens do not depend
on the rows it shares a batch with. Log-probs are under the raw model distribution (temperature 1, no truncation),
the quantity `TrainEngine.logprobs` computes, so RL importance ratios compare like with like; a request with a
grammar, a logit bias or a penalty samples from, and reports log-probs under, the distribution they leave.
"""

from __future__ import annotations

import random
from typing import Any, Callable

import torch

from .errors import GrammarError, WorkerError
from .grammar import GrammarConstraint, parse_program, vocabulary_bytes
from .prefix_cache import PrefixCache

DEFAULTS = {"n": 1, "maxTokens": 64, "temperature": 1.0, "topP": 1.0, "topK": 0, "topLogprobs": 0}


class Row:
    def __init__(self, request_index: int, sample_index: int, request: dict) -> None:
        self.request_index = request_index
        self.sample_index = sample_index
        self.request = request
        self.tokens = []
        self.logprobs = []
        self.versions = []
        self.top = []
        self.finish = None
        self.cut = None  # text length where a stop string begins
        self.constraint: GrammarConstraint | None = None  # the request's grammar, followed token by token
        self.adjustment: Adjustment | None = None  # the request's logit bias and penalties
        self.generator: torch.Generator | None = None  # the sample's own seeded generator
        self.error = None  # why the request failed, when its grammar did (GrammarError)


class Adjustment:
    """OpenAI's `logit_bias`, `frequency_penalty` and `presence_penalty` for one row: `logit[j] + bias[j] -
    count[j] * frequency - (count[j] > 0) * presence`, `count[j]` being how often the row has sampled token j."""

    def __init__(self, bias: list[tuple[int, float]], frequency: float, presence: float) -> None:
        self.ids = torch.tensor([t for t, _ in bias], dtype=torch.long)
        self.values = torch.tensor([b for _, b in bias], dtype=torch.float32)
        self.frequency = frequency
        self.presence = presence

    def apply(self, logits: torch.Tensor, tokens: list[int]) -> None:
        """Adjusts one row's logits [V] in place, given the tokens the row has sampled."""
        if self.ids.numel():
            logits.index_add_(0, self.ids.to(logits.device), self.values.to(logits.device))
        if tokens and (self.frequency or self.presence):
            sampled = torch.tensor(tokens, device=logits.device)
            counts = torch.bincount(sampled, minlength=logits.shape[0]).to(logits.dtype)
            logits -= counts * self.frequency + (counts > 0).to(logits.dtype) * self.presence


def _number(value, low, high):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high


def _adjustment(i, req, vocab_size):
    """The row's Adjustment, or None when the request asks for no bias and no penalty."""
    frequency = req.get("frequencyPenalty") or 0
    presence = req.get("presencePenalty") or 0
    for name, value in (("frequencyPenalty", frequency), ("presencePenalty", presence)):
        if not _number(value, -2, 2):
            raise WorkerError(f"requests[{i}].{name}: expected a number from -2 to 2, got {value!r}")
    bias = []
    for key, value in (req.get("logitBias") or {}).items():
        if not str(key).isdigit() or int(key) >= vocab_size:
            raise WorkerError(f"requests[{i}].logitBias: expected token ids from 0 to {vocab_size - 1}, got {key!r}")
        if not _number(value, -100, 100):
            raise WorkerError(f"requests[{i}].logitBias[{key}]: expected a number from -100 to 100, got {value!r}")
        if value:
            bias.append((int(key), float(value)))
    return Adjustment(bias, frequency, presence) if bias or frequency or presence else None


def _rows(requests, vocab_size, tokenizer):
    rows = []
    for i, raw in enumerate(requests):
        req = {**DEFAULTS, **raw}
        prompt = req.get("promptTokens")
        if not isinstance(prompt, list) or not prompt:
            raise WorkerError(f"requests[{i}].promptTokens: expected a non-empty list of token ids")
        for t in prompt:
            if not isinstance(t, int) or t < 0 or t >= vocab_size:
                raise WorkerError(f"requests[{i}].promptTokens: expected token ids in [0, {vocab_size}), got {t}")
        if not isinstance(req["n"], int) or req["n"] < 1:
            raise WorkerError(f"requests[{i}].n: expected a positive integer, got {req['n']!r}")
        if not isinstance(req["maxTokens"], int) or req["maxTokens"] < 1:
            raise WorkerError(f"requests[{i}].maxTokens: expected a positive integer, got {req['maxTokens']!r}")
        if req["temperature"] < 0 or not 0 < req["topP"] <= 1 or req["topK"] < 0:
            raise WorkerError(f"requests[{i}]: expected temperature >= 0, 0 < topP <= 1 and topK >= 0")
        if req.get("cacheSalt") is not None and not isinstance(req["cacheSalt"], str):
            raise WorkerError(f"requests[{i}].cacheSalt: expected a string, got {req['cacheSalt']!r}")
        if req.get("stop") and tokenizer is None:
            raise WorkerError(f"requests[{i}].stop: this checkpoint has no tokenizer transformers reads; give no stop strings")
        adjustment = _adjustment(i, req, vocab_size)
        seed = req.get("seed")
        if seed is None:
            seed = random.getrandbits(31)
        for s in range(req["n"]):
            row = Row(i, s, req)
            row.adjustment = adjustment
            row.generator = torch.Generator().manual_seed((seed * 1_000_003 + s * 7919) & 0xFFFFFFFF)
            rows.append(row)
    return rows


def _pick(logits, rows, device):
    """Sampled token ids [R] and the raw log-prob of every token [R, V] for one step of every row."""
    log_probs = torch.log_softmax(logits, dim=-1)
    greedy = logits.argmax(dim=-1)
    temps = torch.tensor([r.request["temperature"] for r in rows], device=device)
    uniforms = torch.cat([torch.rand(1, generator=r.generator) for r in rows]).to(device)
    if not bool((temps > 0).any()):
        return greedy, log_probs
    scaled = logits / torch.clamp(temps, min=1e-6).unsqueeze(1)
    vocab = logits.shape[1]
    truncate = any(r.request["topK"] > 0 or r.request["topP"] < 1 for r in rows)
    if truncate:
        scaled, order = scaled.sort(dim=-1, descending=True)
    probs = torch.softmax(scaled, dim=-1)
    if truncate:
        ks = torch.tensor([r.request["topK"] or vocab for r in rows], device=device)
        keep = torch.arange(vocab, device=device).unsqueeze(0) < ks.unsqueeze(1)
        pool = probs * keep
        mass_before = pool.cumsum(dim=-1) - pool
        top_p = torch.tensor([r.request["topP"] for r in rows], device=device)
        keep &= mass_before < top_p.unsqueeze(1) * pool.sum(dim=-1, keepdim=True)
        probs = probs * keep
    cumulative = probs.cumsum(dim=-1)
    target = (uniforms * cumulative[:, -1]).unsqueeze(1)
    index = torch.searchsorted(cumulative, target, right=True).clamp(max=vocab - 1)
    sampled = (order.gather(1, index) if truncate else index).squeeze(1)
    return torch.where(temps > 0, sampled, greedy), log_probs


def _finish(row, token, eos_ids, tokenizer, longest_stop):
    """Why the row is finished after `token`, if it is."""
    req = row.request
    if token in eos_ids and not req.get("ignoreEos"):
        return "stop"
    stops = [s for s in req.get("stop") or [] if s]
    if stops:
        window = tokenizer.decode(row.tokens[-(4 * longest_stop + 4):], skip_special_tokens=True)
        if any(s in window for s in stops):
            text = tokenizer.decode(row.tokens, skip_special_tokens=True)
            row.cut = min(at for at in (text.find(s) for s in stops) if at >= 0)
            return "stop"
    if len(row.tokens) >= req["maxTokens"]:
        return "length"
    return None


def _token_bytes(engine):
    """The bytes of every token id of the engine's vocabulary, read once."""
    if getattr(engine, "token_bytes", None) is None:
        engine.token_bytes = vocabulary_bytes(engine.tokenizer, engine.hf_config.vocab_size)
    return engine.token_bytes


def _text(engine, row):
    """The row's decoded output, cut where a stop string begins."""
    if engine.tokenizer is None:
        return ""
    text = engine.tokenizer.decode(row.tokens, skip_special_tokens=True)
    return text if row.cut is None else text[: row.cut]


def _fail_request(rows, failed, error, engine=None):
    """Ends every unfinished sample of `failed`'s request with its grammar's error, the other requests going on; the
    events that tell a listener so (when `engine` is given, to decode their text)."""
    events = []
    for r in rows:
        if r.request_index == failed.request_index and r.finish is None:
            r.finish, r.error = "abort", str(error)
            if engine is not None:
                events.append({"i": r.request_index, "s": r.sample_index, "finish": "abort", "text": _text(engine, r)})
    return events


SHARED_PREFIX_MIN = 16
"""The fewest tokens a batch's rows must all begin with for that prefix to run once, apart from the rest."""


def shared_prefix_length(prompts: list[list[int]]) -> int:
    """How many tokens every prompt begins with alike, leaving each at least one of its own (whose logits start its
    answer); 0 when that is under SHARED_PREFIX_MIN."""
    common = min(len(p) for p in prompts) - 1
    first = prompts[0]
    for p in prompts[1:]:
        n = 0
        while n < common and p[n] == first[n]:
            n += 1
        common = n
    return common if common >= SHARED_PREFIX_MIN else 0


def _prefix_cache(engine: Any, prefix: list[int], rows: list[Row]) -> Any:
    """The keys and values of `prefix`, computed once (after the part of it the engine's prefix cache holds, which then
    keeps its whole blocks) and repeated for each row."""
    store: PrefixCache | None = engine.prefix_cache
    salts = sorted({r.request.get("cacheSalt") or "" for r in rows})
    start, cache = store.lookup(prefix, salts, engine.hf_config) if store else (0, None)
    if start < len(prefix):
        with torch.no_grad():
            ids = torch.tensor([prefix[start:]], dtype=torch.long, device=engine.device)
            positions = torch.arange(start, len(prefix), device=engine.device).unsqueeze(0)
            cache = engine.model(input_ids=ids, position_ids=positions, past_key_values=cache, use_cache=True,
                                 logits_to_keep=1).past_key_values
    assert cache is not None  # from the store when it held the whole prefix, else computed just above
    if store:
        store.store(prefix, salts, cache)
    cache.batch_repeat_interleave(len(rows))
    return cache


def _prompt_batch(rests: list[list[int]], start: int, device: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The rows' prompts (after the `start` tokens they share, already in the cache) left-padded to one length: ids,
    the attention mask over the shared tokens and these, and each token's position."""
    width = max(len(p) for p in rests)
    ids = torch.zeros((len(rests), width), dtype=torch.long)
    attention = torch.zeros((len(rests), start + width), dtype=torch.long)
    attention[:, :start] = 1
    for b, p in enumerate(rests):
        ids[b, width - len(p):] = torch.tensor(p)
        attention[b, start + width - len(p):] = 1
    ids, attention = ids.to(device), attention.to(device)
    positions = (attention.cumsum(dim=1) - 1).clamp(min=0)[:, start:]
    return ids, attention, positions


def generate(
    engine: Any,
    requests: list[dict],
    aborted: Callable[[str | None], bool],
    on_tokens: Callable[[list[dict]], None] | None = None,
    share_prefix: bool = True,
) -> list[dict]:
    """One result per sample, in request order then sample order; `aborted(request_id)` says whether a
    request (or the whole call, for None) was cancelled. `on_tokens(events)`, when given, hears after each decoding
    step what every row sampled: `{i, s, token, logprob, version, top?}` (request and sample index), with `finish`
    and the final `text` on a row's last event; a row cancelled between steps sends `{i, s, finish, text}` alone.
    With `share_prefix`, the tokens every row's prompt begins with (a request's n samples; a rollout batch's system
    prompt and tools) run once, as vLLM's prefix caching and SGLang's radix cache share them. With the engine's
    `prefix_cache`, they run apart for a single row too, and the part of them an earlier call computed is not run
    again."""
    model, device = engine.model, engine.device
    rows = _rows(requests, engine.hf_config.vocab_size, engine.tokenizer)
    programs: dict[int, list[list[int]]] = {}  # each request's grammar program, parsed once for its samples
    for r in rows:
        if r.request.get("grammar") is not None and r.finish is None:
            try:
                if r.request_index not in programs:
                    path = f"requests[{r.request_index}].grammar"
                    programs[r.request_index] = parse_program(r.request["grammar"], path)
                r.constraint = GrammarConstraint(programs[r.request_index], _token_bytes(engine), engine.eos_ids)
            except GrammarError as error:
                _fail_request(rows, r, error)
    longest_stop = max((len(s) for r in rows for s in r.request.get("stop") or []), default=0)
    prompts = [r.request["promptTokens"] for r in rows]
    apart = engine.prefix_cache is not None or (share_prefix and len(rows) > 1)
    shared = shared_prefix_length(prompts) if apart else 0
    cache = _prefix_cache(engine, prompts[0][:shared], rows) if shared else None
    ids, attention, positions = _prompt_batch([p[shared:] for p in prompts], shared, device)
    steps = max(r.request["maxTokens"] for r in rows)
    with torch.no_grad():
        for _ in range(steps):
            live = [r for r in rows if r.finish is None]
            if not live or aborted(None):
                break
            events = []
            for r in live:
                if aborted(r.request.get("id")):
                    r.finish = "abort"
                    events.append({"i": r.request_index, "s": r.sample_index, "finish": "abort", "text": _text(engine, r)})
            # only the last position's logits are sampled: the vocabulary's projection of the others is skipped
            out = model(input_ids=ids, attention_mask=attention, position_ids=positions, past_key_values=cache,
                        use_cache=True, logits_to_keep=1)
            cache = out.past_key_values
            logits = out.logits[:, -1].float()
            for b, r in enumerate(rows):
                if r.finish is None and r.adjustment is not None:
                    r.adjustment.apply(logits[b], r.tokens)
                if r.finish is None and r.constraint is not None:
                    try:
                        r.constraint.mask(logits[b])
                    except GrammarError as error:
                        events.extend(_fail_request(rows, r, error, engine))
            picked, log_probs = _pick(logits, rows, device)
            chosen = log_probs.gather(1, picked.unsqueeze(1)).squeeze(1).cpu().tolist()
            tokens = picked.cpu().tolist()
            want_top = max(r.request["topLogprobs"] for r in rows)
            top = log_probs.topk(want_top, dim=-1) if want_top else None
            for b, r in enumerate(rows):
                if r.finish is not None:
                    continue
                if r.constraint is not None:
                    try:
                        r.constraint.advance(tokens[b])
                    except GrammarError as error:
                        events.extend(_fail_request(rows, r, error, engine))
                        continue
                r.tokens.append(tokens[b])
                r.logprobs.append(chosen[b])
                r.versions.append(engine.version)
                k = r.request["topLogprobs"]
                if k:
                    assert top is not None  # drawn when any row asked for top log-probs
                    values, indices = top.values[b, :k].tolist(), top.indices[b, :k].tolist()
                    r.top.append([{"token": t, "logprob": v} for t, v in zip(indices, values)])
                r.finish = _finish(r, tokens[b], engine.eos_ids, engine.tokenizer, longest_stop)
                if on_tokens is not None:
                    event = {"i": r.request_index, "s": r.sample_index, "token": tokens[b], "logprob": chosen[b],
                             "version": engine.version}
                    if k:
                        event["top"] = r.top[-1]
                    if r.finish is not None:
                        event["finish"], event["text"] = r.finish, _text(engine, r)
                    events.append(event)
            if on_tokens is not None and events:
                on_tokens(events)
            ids = picked.unsqueeze(1)
            attention = torch.cat([attention, torch.ones_like(ids)], dim=1)
            positions = positions[:, -1:] + 1
    results = []
    for r in rows:
        result = {
            "sampleIndex": r.sample_index,
            "text": _text(engine, r),
            "promptTokens": r.request["promptTokens"],
            "outputTokens": r.tokens,
            "outputLogprobs": r.logprobs,
            "outputVersions": r.versions,
            "finishReason": r.finish or "abort",
        }
        if r.request.get("id") is not None:
            result["requestId"] = r.request["id"]
        if r.request["topLogprobs"]:
            result["topLogprobs"] = r.top
        if r.error is not None:
            result["error"] = {"type": "GrammarError", "message": r.error}
        results.append(result)
    return results
