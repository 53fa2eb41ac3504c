"""The desktop: browser tabs, JavaScript dialogs and in-page modals as GUI-bridge windows.

`Desktop` (in `registry`) follows the browser's page targets, keeps one `Tab` per page,
one `JsDialog` per open alert/confirm/prompt/beforeunload and one `InPageModal` per open
`<dialog>` (showModal), and reports every change of what it publishes. Each window object
owns its operations; `windows` holds the pure window model (operable set, modal chains).
"""
