"""Window tools: one record per tool, the list of what is callable now, one dispatcher.

`records` describes every browser action (name, schemas, annotations, which kind of
window it applies to, handler); `dispatch.call_tool` runs the GUI-bridge checks in order
(window → modal → availability → input → version) and then the handler.
"""
