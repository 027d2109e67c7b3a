"""The Python interpreter's verdicts on compiled grammar programs, for grammar-agreement.test.ts: for each program,
whether each text is taken whole; for each malformed program, the error parsing it raised.

    python grammar_verdicts.py <cases.json>  > verdicts.json

`cases.json` is `{"matches": [{"program": ..., "texts": [...]}], "malformed": [...]}`.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))

from arc_torch.errors import WorkerError  # noqa: E402
from arc_torch.grammar import GrammarMachine, parse_program  # noqa: E402


def matches(program: dict, text: str) -> bool:
    """Whether the program takes the whole of `text` and may end there."""
    machine = GrammarMachine(parse_program(program))
    states = machine.start()
    for byte in text.encode("utf-8"):
        states = machine.step(states, byte)
        if not states.alive():
            return False
    return states.accepts


def refusal(program: object) -> str | None:
    """The error a malformed program is refused with, or None when it is taken."""
    try:
        parse_program(program)
    except WorkerError as error:
        return str(error)
    return None


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    json.dump({
        "matches": [[matches(case["program"], text) for text in case["texts"]] for case in cases["matches"]],
        "malformed": [refusal(program) for program in cases["malformed"]],
    }, sys.stdout)


if __name__ == "__main__":
    main()
