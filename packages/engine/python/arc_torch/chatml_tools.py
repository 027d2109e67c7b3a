"""A ChatML chat template with tools in the Hermes / Qwen2.5 format, for imported ChatML models whose own template
has no tool syntax (SmolLM2).

Offered tools go into the system turn, one JSON object per line inside `<tools></tools>`; an assistant's calls are
written `<tool_call>{"name": "<name>", "arguments": <arguments>}</tool_call>` right after its content, exactly the
text Arc's Hermes tool-call format parses and its grammar for `tool_choice: required` makes the model write; a
`tool` message's result goes back as a user turn inside `<tool_response></tool_response>`. A conversation without
tools renders exactly as the source template renders it: the same turns, and the same default system prompt when
the conversation has none.

Every piece of text is an expression, so that Jinja's whitespace handling (transformers renders with trim_blocks
and lstrip_blocks) has nothing to trim: the same ids in any Jinja implementation.
"""

import json
import re

#: The system prompt a ChatML template writes when a conversation has none: `'<|im_start|>system\n...<|im_end|>'`.
DEFAULT_SYSTEM = re.compile(r"'<\|im_start\|>system(?:\\n|\n)(.*?)<\|im_end\|>", re.DOTALL)

TOOLS_INTRO = (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_OUTRO = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\n<tool_call>{"name": <function-name>, "arguments": <args-json-object>}'
    "</tool_call>"
)


def _literal(text: str) -> str:
    """A Jinja string literal of `text` (JSON's escapes are Jinja's)."""
    return json.dumps(text)


def chatml_tools_template(default_system: str | None) -> str:
    """The template; `default_system` is the system prompt written when a conversation has none (None: no system
    turn then, unless tools are offered)."""
    default = "none" if default_system is None else _literal(default_system)
    return (
        r"""{% if messages and messages[0].role == 'system' %}{% set system = messages[0].content %}"""
        r"""{% set turns = messages[1:] %}{% else %}"""
        f"""{{% set system = {default} %}}"""
        r"""{% set turns = messages %}{% endif %}"""
        r"""{% if system is not none or tools %}{{ '<|im_start|>system\n' + (system or '') }}"""
        f"""{{% if tools %}}{{{{ {_literal(TOOLS_INTRO)} }}}}"""
        r"""{% for tool in tools %}{{ '\n' + (tool | tojson) }}{% endfor %}"""
        f"""{{{{ {_literal(TOOLS_OUTRO)} }}}}{{% endif %}}"""
        r"""{{ '<|im_end|>\n' }}{% endif %}"""
        r"""{% for message in turns %}"""
        r"""{% if message.role == 'assistant' %}{{ '<|im_start|>assistant\n' + (message.content or '') }}"""
        r"""{% if message.tool_calls %}{% for call in message.tool_calls %}"""
        r"""{{ '<tool_call>{"name": ' + (call.function.name | tojson) + ', "arguments": ' }}"""
        r"""{% if call.function.arguments is string %}{{ call.function.arguments }}"""
        r"""{% else %}{{ call.function.arguments | tojson }}{% endif %}{{ '}</tool_call>' }}"""
        r"""{% endfor %}{% endif %}{{ '<|im_end|>\n' }}"""
        r"""{% elif message.role == 'tool' %}"""
        r"""{{ '<|im_start|>user\n<tool_response>\n' + message.content + '\n</tool_response><|im_end|>\n' }}"""
        r"""{% else %}{{ '<|im_start|>' + message.role + '\n' + (message.content or '') + '<|im_end|>\n' }}"""
        r"""{% endif %}{% endfor %}"""
        r"""{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"""
    )


def tool_template_for(source: str | None) -> str | None:
    """Arc's ChatML template with tools in place of `source`, when `source` is a ChatML template that renders no
    tools; None when it renders tools already or is not ChatML (it is kept as it is)."""
    if source is None or "<|im_start|>" not in source or "tools" in source:
        return None
    found = DEFAULT_SYSTEM.search(source)
    return chatml_tools_template(found.group(1).replace("\\n", "\n") if found else None)
