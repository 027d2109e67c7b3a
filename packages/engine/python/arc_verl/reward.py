"""Arc's reward for VERL jobs: VERL's custom reward function (`reward.custom_reward_function`).

Each response is scored by Arc through its API (`POST /v1/rewards`): with the task family's verifier when the row
has a reference solution (`kind` verifier: 1 or 0; partial: partial credit by failure class), else with the tenant's
judge against its rubric. The job's runtime environment gives the server and the tenant key: ARC_URL and
ARC_API_KEY. Standard library only, so it runs in any VERL environment.
"""

import json
import os
import time
import urllib.error
import urllib.request
from typing import Any

#: Tries of one request before its error ends the job (an outage or a judge over its budget is retried).
ATTEMPTS = 6
#: Seconds before the first retry; each later one waits twice as long.
BACKOFF_S = 1.0
#: Seconds one request may take.
TIMEOUT_S = 120


class RewardError(RuntimeError):
    """Arc could not score a response: the message says which row and why."""


def _settings():
    url = os.environ.get("ARC_URL")
    key = os.environ.get("ARC_API_KEY")
    if not url or not key:
        raise RewardError(
            "ARC_URL and ARC_API_KEY must be set in the job's runtime environment (runtime_env.env_vars)"
        )
    return url.rstrip("/"), key


def _item(data_source, solution_str, ground_truth, extra_info):
    """The row as `POST /v1/rewards` takes it: env, question, the response, the solution and the recorded prompt."""
    extra = extra_info or {}
    env = extra.get("env") or (data_source.split("/", 1)[1] if data_source.startswith("arc/") else None)
    if not env:
        raise RewardError(f"data_source {data_source!r}: expected arc/<env> or extra_info.env")
    item = {"env": env, "question": extra.get("question") or "", "answer": solution_str}
    solution = json.loads(ground_truth) if isinstance(ground_truth, str) and ground_truth else ground_truth
    if solution is not None:
        item["solution"] = solution
    if extra.get("context"):
        item["context"] = json.loads(extra["context"])
    return item


def score_items(items: list[dict], kind: str = "partial") -> list[dict]:
    """Scores rows through Arc's API; returns its answers (`score`, `passed`, `judgedBy`), retrying what can pass."""
    url, key = _settings()
    body = json.dumps({"kind": kind, "items": items}).encode()
    delay = BACKOFF_S
    for attempt in range(1, ATTEMPTS + 1):
        request = urllib.request.Request(
            f"{url}/v1/rewards",
            data=body,
            method="POST",
            headers={"content-type": "application/json", "authorization": f"Bearer {key}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                answers = json.loads(response.read())["data"]
            unjudged = [a for a in answers if a.get("score") is None]
            if not unjudged:
                return answers
            reason = unjudged[0].get("reason", "not scored")
        except urllib.error.HTTPError as error:
            reason = f"HTTP {error.code}: {error.read().decode(errors='replace')[:300]}"
            if error.code < 500 and error.code != 429:
                raise RewardError(f"{url}/v1/rewards refused the rows: {reason}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
            reason = str(getattr(error, "reason", error))
        if attempt == ATTEMPTS:
            raise RewardError(f"{url}/v1/rewards: no score after {ATTEMPTS} tries: {reason}")
        time.sleep(delay)
        delay *= 2
    raise AssertionError("unreachable")


def compute_score(data_source: str, solution_str: str, ground_truth: str, extra_info: dict | None = None,
                  kind: str = "partial", **kwargs: Any) -> dict[str, float]:
    """VERL's reward signature: a row's response scored by Arc.

    Returns the same keys for every row, as VERL's reward manager needs: `score` in [0, 1] and `passed` (1.0 when
    the verifier passed the response or the judge found no failure).
    """
    [answer] = score_items([_item(data_source, solution_str, ground_truth, extra_info)], kind)
    return {"score": float(answer["score"]), "passed": 1.0 if answer.get("passed") else 0.0}
