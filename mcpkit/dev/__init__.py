"""``mcpkit dev TARGET``: a live page to try an App in the browser (layer L6).

Never loaded by ``import mcpkit`` or ``mcpkit run``; it needs the ``http`` extra (uvicorn).

- :mod:`~mcpkit.dev.server`: ``DevServer``, one ASGI application serving the page and its
  static files, the App's real Streamable HTTP endpoint at ``/mcp`` (an
  :class:`~mcpkit.transports.http.HttpApp`, replaced on reload), the generated docs as JSON
  and an event stream that tells the page when the App reloaded or failed to;
- :mod:`~mcpkit.dev.docs`: the docs of the App (:mod:`mcpkit.docgen`) as HTML fragments,
  one per tool, resource, template and prompt;
- ``static/``: the page (HTML, CSS and plain JavaScript modules, no dependencies): a small
  MCP client of ``/mcp`` that builds forms from the published schemas.
"""
