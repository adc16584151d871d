"""A notes board as an MCP App (the ``io.modelcontextprotocol/ui`` extension, SEP-1865).

``show_board`` is linked to the view ``ui://notes/board``: a host with MCP Apps renders the view
and hands it the tool's result; every other client shows the tool's text. The view calls
``add_note`` (``ui_visibility=["app"]``: hosts keep it from the model) to add a note.

Run it with ``mcpkit run examples/notes_board.py:app``.
"""

from __future__ import annotations

from mcpkit import App, ToolResult

app = App("notes-board", version="1.0.0")

NOTES: list[str] = ["buy milk", "call Ada"]

BOARD = """<!doctype html>
<html>
  <body>
    <ul id="notes"></ul>
    <script>
      // The host sends the tool's result as ui/notifications/tool-result (JSON-RPC over
      // postMessage); the view draws structuredContent.notes.
      window.addEventListener("message", (event) => {
        const message = event.data;
        if (message?.method !== "ui/notifications/tool-result") return;
        const list = document.getElementById("notes");
        list.replaceChildren(
          ...message.params.structuredContent.notes.map((note) => {
            const item = document.createElement("li");
            item.textContent = note;
            return item;
          }),
        );
      });
    </script>
  </body>
</html>
"""


@app.ui("ui://notes/board", title="Notes board", prefers_border=True)
def board() -> str:
    """The notes as a board of cards."""
    return BOARD


@app.tool(ui="ui://notes/board")
def show_board() -> ToolResult:
    """Show the notes (as a board where the host can show one)."""
    text = "\n".join(f"- {note}" for note in NOTES) or "no notes"
    return ToolResult(content=text, structured={"notes": list(NOTES)})


@app.tool(ui="ui://notes/board", ui_visibility=["app"])
def add_note(text: str) -> ToolResult:
    """Add a note (called by the board view)."""
    NOTES.append(text)
    return ToolResult(content=f"added {text!r}", structured={"notes": list(NOTES)})
