"""Code actions on a failure: "What do we know about this error?" and "Remember how this
was fixed…". Both carry the failure in their command's argument, so they work for a
diagnostic poimen has not seen before (a client without the editor plugin)."""

from __future__ import annotations

from lsprotocol import types
from pygls.capabilities import get_capability

from .inputs import OWN_SOURCE

WHAT_DO_WE_KNOW = "What do we know about this error?"
REMEMBER = "Remember how this was fixed…"


def code_actions(ls, params: types.CodeActionParams) -> list[types.CodeAction | types.Command]:
    session = ls.session
    uri = params.text_document.uri
    targets: dict[str, tuple[dict, list[types.Diagnostic]]] = {}
    for placement in session.index.overlapping(uri, params.range):
        args = {"uri": uri, "range": _range(placement.range), "failure": placement.failure.key}
        targets.setdefault(placement.failure.key, (args, []))
    for diag in params.context.diagnostics:
        data = diag.data if isinstance(diag.data, dict) else {}
        if data.get("failure") in targets:
            targets[data["failure"]][1].append(diag)
        elif (diag.source or "").lower() != OWN_SOURCE and diag.message.strip():
            placed = [k for k, (a, _) in targets.items() if a["range"] == _range(diag.range)]
            if placed:
                targets[placed[0]][1].append(diag)
            else:
                args = {"uri": uri, "range": _range(diag.range), "message": diag.message}
                targets[f"message:{diag.message}"] = (args, [diag])
    wanted = params.context.only
    if wanted and not any(k in (types.CodeActionKind.QuickFix, types.CodeActionKind.Empty)
                          for k in wanted):
        return []
    literal = get_capability(ls.client_capabilities,
                             "text_document.code_action.code_action_literal_support") is not None
    out: list[types.CodeAction | types.Command] = []
    for args, diagnostics in targets.values():
        for title, command in ((WHAT_DO_WE_KNOW, "poimen.whatDoWeKnow"),
                               (REMEMBER, "poimen.remember")):
            cmd = types.Command(title=title, command=command, arguments=[args])
            out.append(types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix,
                                        diagnostics=diagnostics or None, command=cmd)
                       if literal else cmd)
    return out


def _range(rng: types.Range) -> dict:
    return {"start": {"line": rng.start.line, "character": rng.start.character},
            "end": {"line": rng.end.line, "character": rng.end.character}}
