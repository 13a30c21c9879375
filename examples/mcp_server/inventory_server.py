"""A small real Model Context Protocol server: product stock look-up ("inventory").

Run it over stdio (what an MCP client launches)::

    python examples/mcp_server/inventory_server.py

or over streamable HTTP on 127.0.0.1::

    python examples/mcp_server/inventory_server.py --http --port 8765   # → http://127.0.0.1:8765/mcp

Point Hermes Desk at it in the settings YAML::

    llm:
      mcp_servers:
        - name: inventory
          command: [python, examples/mcp_server/inventory_server.py]
"""

from __future__ import annotations

import argparse
from typing import TypedDict

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

STOCK = {
    "SKU-1001": {"name": "无线耳机 Pro", "stock": 42, "warehouse": "上海"},
    "SKU-1002": {"name": "智能手表 S2", "stock": 0, "warehouse": "广州"},
    "SKU-1003": {"name": "充电宝 20000mAh", "stock": 7, "warehouse": "北京"},
}

server = MCPServer("inventory", instructions="Product stock look-ups for the demo shop.")


class Stock(TypedDict):
    sku: str
    name: str
    stock: int
    in_stock: bool
    warehouse: str


@server.tool(description="查询商品库存 / look up the stock of a product by SKU (e.g. SKU-1001)")
def get_stock(sku: str) -> Stock:
    item = STOCK.get(sku.strip().upper())
    if item is None:
        raise ToolError(f"unknown SKU {sku}")
    return Stock(
        sku=sku.upper(),
        name=str(item["name"]),
        stock=int(item["stock"]),  # type: ignore[call-overload]
        in_stock=int(item["stock"]) > 0,  # type: ignore[call-overload]
        warehouse=str(item["warehouse"]),
    )


@server.tool(description="列出所有商品 SKU / list every product SKU")
def list_skus() -> list[str]:
    return sorted(STOCK)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP, not stdio")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.port)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
