"""An app that asks for URL-mode elicitation, for the tests of every transport and client.

``list_repos`` needs the user's (pretend) GitHub account: it sends the user to a connect URL
(``ctx.elicit_url``) and, after consent, checks its own state. ``oauth_callback`` stands for the
OAuth redirect route: it stores the token and, from another thread, completes the elicitation.
``checkout`` raises ``UrlElicitationRequired`` instead (the ``-32042`` error in 2025-11-25).
"""

from __future__ import annotations

import threading
from typing import Any

from mcpkit import App, Context, UrlElicitationRequired

app = App("connect", "1.0.0")

WAITING: dict[str, str] = {}  # elicitation id -> the user who was sent to the connect URL
TOKENS: dict[str, str] = {}  # user -> their GitHub token (stored by the callback)
PAID: set[str] = set()
USER = "ada"  # a real server takes the user from ctx.principal


@app.tool
async def list_repos(ctx: Context) -> str:
    """List the user's GitHub repositories (connects the account first)."""
    if USER not in TOKENS:
        flow = ctx.elicitation_id()
        WAITING[flow] = USER
        answer = await ctx.elicit_url(
            f"https://auth.example.com/connect?flow={flow}", "Connect your GitHub account."
        )
        if answer.action != "accept":
            return f"Not connected ({answer.action})."
        if USER not in TOKENS:  # consent is not completion
            return f"Waiting for flow {flow}: finish in your browser, then ask again."
    return f"{USER}'s repositories: mcpkit, notes"


@app.tool
def oauth_callback(flow: str) -> str:
    """What the OAuth redirect route does: store the token, then complete the elicitation."""
    user = WAITING.pop(flow, None)
    if user is None:
        return "unknown flow"
    TOKENS[user] = "gho_secret"
    finisher = threading.Thread(target=app.complete_elicitation, args=(flow,))
    finisher.start()
    finisher.join()
    return "connected"


@app.tool
def checkout(order: str) -> str:
    """Pay for an order (sends the user to the payment page until it is paid)."""
    if order not in PAID:
        raise UrlElicitationRequired(
            f"https://pay.example.com/orders/{order}",
            f"Pay for order {order}.",
            elicitation_id=f"pay-{order}",
        )
    return f"order {order} is paid"


REFUSED_O1: dict[str, Any] = {
    "code": -32042,
    "message": "URL elicitation required",
    "data": {
        "elicitations": [
            {
                "mode": "url",
                "elicitationId": "pay-o1",
                "url": "https://pay.example.com/orders/o1",
                "message": "Pay for order o1.",
            }
        ]
    },
}
"""What ``checkout`` answers for an unpaid order ``o1`` in 2025-11-25 (the ``-32042`` error)."""
