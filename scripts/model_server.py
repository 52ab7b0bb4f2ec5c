"""llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`, same
arguments) with one adaptation for an agent loop such as `little plan`'s;
scripts/model-server.sh runs it (LITTLE_MODEL_COMPAT=0 runs the bare server).

Every completion the server makes is bounded by LITTLE_MODEL_MAX_TOKENS (default 512)
tokens when it names no bound. The `chatml-function-calling` format ignores the request's
`max_tokens` when tool_choice is "auto" (it generates with max_tokens=None), so a 135M
model writing a tool call's JSON may otherwise run until the context is full: minutes on
two cores, past any client's timeout.

(Two more adaptations were needed before `little` learned them itself: the server refuses
an assistant message whose `content` is null, and it ends a streamed answer with tools
before its first data line. `little` now sends `""` and asks such a server again without
streaming; the bare server serves a session, `LITTLE_MODEL_COMPAT=0` shows it.)
"""

import os

import llama_cpp
import llama_cpp.server.__main__ as server

MAX_TOKENS = int(os.environ.get("LITTLE_MODEL_MAX_TOKENS", "512"))


def bounded(create_completion):
    """`Llama.create_completion` with MAX_TOKENS where the caller names no bound."""

    def create(self, *args, **kwargs):
        if kwargs.get("max_tokens") is None or kwargs["max_tokens"] <= 0:
            kwargs["max_tokens"] = MAX_TOKENS
        return create_completion(self, *args, **kwargs)

    return create


def main():
    llama_cpp.Llama.create_completion = bounded(llama_cpp.Llama.create_completion)
    server.main()


if __name__ == "__main__":
    main()
