"""llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`, same arguments),
with three adaptations of `POST /v1/chat/completions` requests, for an agent loop such as
`little plan`'s. scripts/model-server.sh runs it (LITTLE_MODEL_COMPAT=0 runs the bare server).

1. An assistant message whose `content` is null or missing (one that only called tools,
   as the OpenAI API allows and `little` sends) gets `content: ""`. The bare server answers
   HTTP 500 with pydantic validation errors for null, and its chat template fails on a
   missing `content`.
2. A streamed request with `tools` and `tool_choice` "auto" (or none) is refused with HTTP
   400 "streaming is not supported with tool_choice auto". The bare server's
   `chatml-function-calling` format raises "Automatic streaming tool choice is not
   supported" after answering 200, which a client sees as a stream cut before its first
   data line; a 400 that names streaming is what OpenAI-compatible clients (little's
   included) take as "ask again without streaming".
3. Every completion the server makes is bounded by LITTLE_MODEL_MAX_TOKENS (default 512)
   tokens when it names no bound. The `chatml-function-calling` format ignores the
   request's `max_tokens` when tool_choice is "auto" (it generates with max_tokens=None),
   so a 135M model writing a tool call's JSON may otherwise run until the context is
   full: minutes on two cores, past any client's timeout.

Everything else passes through unchanged.
"""

import json
import os

import llama_cpp
import llama_cpp.server.__main__ as server

MAX_TOKENS = int(os.environ.get("LITTLE_MODEL_MAX_TOKENS", "512"))


def adapt(body):
    """The request as the bare server can serve it, or an error message for a 400."""
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "assistant" and message.get("content") is None:
            message["content"] = ""
    if body.get("stream") and body.get("tools") and body.get("tool_choice", "auto") == "auto":
        return None, "streaming is not supported with tool_choice auto by this server; ask without stream"
    return body, None


def bounded(create_completion):
    """`Llama.create_completion` with MAX_TOKENS where the caller names no bound."""

    def create(self, *args, **kwargs):
        if kwargs.get("max_tokens") is None or kwargs["max_tokens"] <= 0:
            kwargs["max_tokens"] = MAX_TOKENS
        return create_completion(self, *args, **kwargs)

    return create


class Compat:
    """ASGI middleware around the server's app."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].endswith("/chat/completions"):
            return await self.app(scope, receive, send)
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if isinstance(body, dict):
            body, refusal = adapt(body)
            if refusal is not None:
                payload = json.dumps({"error": {"message": refusal, "type": "invalid_request_error"}}).encode()
                await send({"type": "http.response.start", "status": 400,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(payload)).encode())]})
                await send({"type": "http.response.body", "body": payload})
                return
            raw = json.dumps(body).encode()
            scope = dict(scope)
            scope["headers"] = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
            scope["headers"].append((b"content-length", str(len(raw)).encode()))
        sent = False

        async def replay():
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}

        return await self.app(scope, replay, send)


def main():
    llama_cpp.Llama.create_completion = bounded(llama_cpp.Llama.create_completion)
    create_app = server.create_app
    server.create_app = lambda **settings: Compat(create_app(**settings))
    server.main()


if __name__ == "__main__":
    main()
