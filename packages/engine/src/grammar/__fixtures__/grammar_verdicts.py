"""The Python matcher's verdicts on the shared grammar corpus (grammar-corpus.json), for grammar-agreement.test.ts:
for each case of `matches`, whether each text is taken whole; for each case of `refused`, the error it raised.

    python grammar_verdicts.py <grammar-corpus.json>  > verdicts.json
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))

from arc_torch.errors import GrammarError  # noqa: E402
from arc_torch.grammar import check_grammar, expand_states, grammar_matcher, step_states  # noqa: E402


def matches(grammar: dict, text: str) -> bool:
    """Whether the matcher takes the whole of `text` and may end there."""
    states = expand_states([grammar_matcher(grammar)])
    for byte in text.encode("utf-8"):
        states = step_states(states, byte)
        if not states:
            return False
    return any(s.accepts() for s in states)


def refusal(grammar: dict) -> str | None:
    """The error the grammar is refused with before any output, or None when it is taken."""
    try:
        check_grammar(grammar)
        grammar_matcher(grammar)
    except GrammarError as error:
        return str(error)
    return None


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        corpus = json.load(f)
    json.dump({
        "matches": [[matches(case["grammar"], text) for text, _ in case["texts"]] for case in corpus["matches"]],
        "refused": [refusal(case["grammar"]) for case in corpus["refused"]],
    }, sys.stdout)


if __name__ == "__main__":
    main()
