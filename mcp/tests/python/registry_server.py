"""A tool registry served by the Python SDK's high-level server (`MCPServer`): two helpdesk
tools with input and output schemas, for `little snapshot|lock|verify --tools-from-mcp`.

REGISTRY_DESCRIPTION changes the first tool's description; REGISTRY_DROP=getTicket leaves
it out; REGISTRY_UNTYPED=getTicket lists it without an output schema (an unstructured
tool, as many servers list theirs); REGISTRY_MODE=exit|hang|garbage makes a server that
fails in that way.
"""

import os
import sys
import time

from pydantic import BaseModel

mode = os.environ.get("REGISTRY_MODE", "")
if mode == "exit":
    print("helpdesk: cannot reach the ticket database", file=sys.stderr)
    sys.exit(3)
if mode == "hang":
    time.sleep(3600)
if mode == "garbage":
    print("Welcome to the helpdesk shell!", flush=True)
    time.sleep(3600)

from mcp.server.mcpserver import MCPServer  # noqa: E402

server = MCPServer("helpdesk")


class Ticket(BaseModel):
    subject: str
    transcript: str


class Closed(BaseModel):
    closed: bool


if os.environ.get("REGISTRY_DROP") != "getTicket":

    @server.tool(
        name="helpdesk.getTicket",
        description=os.environ.get("REGISTRY_DESCRIPTION", "Fetch a support ticket by its id."),
        structured_output=os.environ.get("REGISTRY_UNTYPED") != "getTicket",
    )
    def get_ticket(ticketId: str) -> Ticket:
        return Ticket(subject="Login fails", transcript="The app crashes on login.")


@server.tool(name="helpdesk.closeTicket", description="Close a support ticket.")
def close_ticket(ticketId: str, note: str = "") -> Closed:
    return Closed(closed=True)


if __name__ == "__main__":
    server.run()
