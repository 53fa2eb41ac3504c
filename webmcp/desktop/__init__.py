"""The desktop: browser tabs, JavaScript dialogs, in-page modals and waiting forms as GUI-bridge windows.

`Desktop` (in `registry`) is the registry of published windows and the router of target
events. A `Tab` (in `tab`) owns its window and is made of parts with private state: the
live view (`refresher`), the navigator (`navigation`), the modal stack (`modal_stack`), the
write guard (`input_guard`) and the tool mirror (`mirror`); a page call is a `PageCall`
(`calls`). What the parts may ask of each other is declared in `ports`; `windows` holds the
pure window model (operable set, modal chains, `VersionCheck`); `races.first_of` is the one
way to wait for the first of several things.
"""
