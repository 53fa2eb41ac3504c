"""What pages supply, made safe before anything else touches it (docs/security.md).

Tool definitions are normalised into something every MCP client accepts (`schema_guard`),
page schemas are checked without fetching references or running unbounded patterns
(`schema_validate`), page text, tool lists and results are capped and attributed to
their page (`page_limits`), and an answer in MCP's own result shape is read for what it
says (`mcp_result`). Pure: no I/O.
"""
