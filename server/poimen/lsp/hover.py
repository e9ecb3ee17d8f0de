"""Hover on a known failure's range: the tier-labelled card, served from the cache."""

from __future__ import annotations

from lsprotocol import types
from pygls.capabilities import get_capability

from . import cards
from .session import place_id


async def hover(ls, params: types.HoverParams) -> types.Hover | None:
    session = ls.session
    uri = params.text_document.uri
    for key in (("diagnostics", uri), ("document", uri)):
        await session.intake.settle(key)  # an input still in its quiet period is answered now
    placements = session.index.at(uri, params.position)
    if not placements:
        return None
    placement = placements[0]
    answer = await session.answer(placement.failure, place_id(  # a miss (after a write) looks up again
        placement.failure, uri, placement.range.start.line))
    if answer.response.get("tier") is None and not placement.failure.signatures:
        return None  # not a failure poimen recognises, and nothing known: say nothing
    return types.Hover(
        contents=types.MarkupContent(kind=_kind(ls), value=cards.card(
            answer.response, answer.provenance, answer.document)),
        range=placement.range)


def _kind(ls) -> types.MarkupKind:
    formats = get_capability(ls.client_capabilities, "text_document.hover.content_format", [])
    if not formats or types.MarkupKind.Markdown in formats:
        return types.MarkupKind.Markdown
    return types.MarkupKind.PlainText
