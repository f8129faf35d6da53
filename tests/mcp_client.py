"""An MCP round trip against `somnus mcp`, driven by the official Python
MCP client: list the tools, run an UPSERT and a FIND, check that the
read-only tool refuses writes, read the syntax card resource and prompt."""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def is_error(res) -> bool:
    # the field is `is_error` in mcp 2.x and `isError` in 1.x
    return bool(getattr(res, "is_error", getattr(res, "isError", False)))


async def main(binary: str, db: str) -> None:
    params = StdioServerParameters(command=binary, args=["--db", db, "mcp", "--maintenance", "off", "--actor", "agent:python"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

            tools = await session.list_tools()
            names = sorted(t.name for t in tools.tools)
            assert names == ["execute_kip", "execute_kip_readonly"], names

            res = await session.call_tool(
                "execute_kip",
                {"command": 'UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Note"} } CONCEPT ?n { {type: "Note", name: :name} } }',
                 "parameters": {"name": "from-mcp"}},
            )
            body = json.loads(res.content[0].text)
            assert not is_error(res) and body["result"]["blocks"] == 1, body

            res = await session.call_tool("execute_kip_readonly", {"command": 'FIND(?n.name) WHERE { ?n {type: "Note"} }'})
            body = json.loads(res.content[0].text)
            assert body["result"] == ["from-mcp"], body

            res = await session.call_tool("execute_kip_readonly", {"command": 'UPSERT { CONCEPT ?n { {type: "Note", name: "sneaky"} } }'})
            body = json.loads(res.content[0].text)
            assert is_error(res) and body["error"]["code"] == "KIP_3004", body

            resources = await session.list_resources()
            uri = str(resources.resources[0].uri)
            card = await session.read_resource(uri)
            assert "FIND" in card.contents[0].text

            prompts = await session.list_prompts()
            assert [p.name for p in prompts.prompts] == ["kip_syntax"]
            prompt = await session.get_prompt("kip_syntax")
            assert "UPSERT" in prompt.messages[0].content.text
    print("mcp round trip ok")


async def subagent(binary: str, db: str, key: str) -> None:
    """As a sub-agent (its key in $SOMNUS_KEY): a write is staged, not applied."""
    import os

    env = dict(os.environ, SOMNUS_KEY=key)
    params = StdioServerParameters(command=binary, args=["--db", db, "mcp", "--maintenance", "off"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            res = await session.call_tool(
                "execute_kip",
                {"command": 'UPSERT { CONCEPT ?n { {type: "$ConceptType", name: "Lead"} } }',
                 "reason": "a new kind of thing the scout keeps meeting"},
            )
            body = json.loads(res.content[0].text)
            assert not is_error(res), body
            assert body["result"]["staged"] is True and body["result"]["status"] == "pending", body
            res = await session.call_tool(
                "execute_kip_readonly",
                {"command": 'FIND(COUNT(?t)) WHERE { ?t {type: "$ConceptType"} FILTER(?t.name == "Lead") }'},
            )
            body = json.loads(res.content[0].text)
            assert body["result"] == 0, body
            # the syntax card tells a sub-agent what staging means
            resources = await session.list_resources()
            card = await session.read_resource(str(resources.resources[0].uri))
            assert "your writes are proposals" in card.contents[0].text
    print("mcp subagent ok")


if __name__ == "__main__":
    if len(sys.argv) > 3:
        asyncio.run(subagent(sys.argv[1], sys.argv[2], sys.argv[3]))
    else:
        asyncio.run(main(sys.argv[1], sys.argv[2]))
