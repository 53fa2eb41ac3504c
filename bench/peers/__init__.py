"""Side-by-side bench of the bridge against the browser MCP servers people use today (issue 12).

Run it with `bash bench/peers/run`; see bench/README.md.
"""
