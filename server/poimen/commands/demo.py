"""`mem demo`: the main job end to end on a local vault, narrated."""

from __future__ import annotations

import typer

from ..lsp.cards import card
from ._common import emit, engine, options

FIRST_FAILURE = """\
$ npm run build
> insights-chrome@0.1.0 build
> webpack --config config/webpack.config.js

Error: error:0308010C:digital envelope routines::unsupported
    at new Hash (node:internal/crypto/hash:67:19)
    at Object.createHash (node:crypto:130:10)
    at BulkUpdateDecorator.hashFactory (/home/beni/ocm/insights-chrome/node_modules/webpack/lib/util/createHash.js:145:18)
    at BulkUpdateDecorator.update (/home/beni/ocm/insights-chrome/node_modules/webpack/lib/util/createHash.js:46:50)
    at RawSource.updateHash (/home/beni/ocm/insights-chrome/node_modules/webpack-sources/lib/RawSource.js:70:8)
  opensslErrorStack: [ 'error:03000086:digital envelope routines::initialization error' ],
  library: 'digital envelope routines',
  reason: 'unsupported',
  code: 'ERR_OSSL_EVP_UNSUPPORTED'
npm ERR! code 1
"""

LESSON = ("Builds broke right after CI moved to Node 17: the new OpenSSL 3 runtime no "
          "longer offers the legacy MD4 hash that webpack 4 uses for module ids. We "
          "upgraded to webpack 5 (which ships its own hash); as a stopgap, "
          "NODE_OPTIONS=--openssl-legacy-provider restores the old algorithms.")

RECURRENCE = """\
Error: error:0308010C:digital envelope routines::unsupported
    at new Hash (node:internal/crypto/hash:71:19)
    at Object.createHash (node:crypto:133:10)
    at BulkUpdateDecorator.hashFactory (C:\\Users\\maria\\work\\shop\\node_modules\\webpack\\lib\\util\\createHash.js:145:18)
    at BulkUpdateDecorator.update (C:\\Users\\maria\\work\\shop\\node_modules\\webpack\\lib\\util\\createHash.js:46:50)
    at RawSource.updateHash (C:\\Users\\maria\\work\\shop\\node_modules\\webpack-sources\\lib\\RawSource.js:70:8)
  library: 'digital envelope routines',
  reason: 'unsupported',
  code: 'ERR_OSSL_EVP_UNSUPPORTED'
"""

VARIANT = "after bumping node in the build image, the bundler crashes creating a hash"


def register(app: typer.Typer) -> None:
    @app.command()
    def demo(ctx: typer.Context):
        """Record a lesson from a real failure, replay a new occurrence, show the answers."""
        eng = engine(ctx, create=True)
        say = (lambda *_: None) if options(ctx).json else typer.echo
        say(f"vault: {eng.vault.path}\n\n1. A build fails; poimen ingests the output.")
        first = eng.ingest(FIRST_FAILURE, source="ci", meta={"demo": "first failure"})
        for sig in first.signatures[:1]:
            say(f"   signature {sig.sig_sha[:12]} ({sig.tool}/{sig.kind}): {sig.message[:80]}")
        say("\n2. A teammate writes down the fix, citing that evidence.")
        lesson = eng.remember("L1", LESSON, [first.evidence_sha])
        say(f"   {lesson.verdict}: memory {(lesson.sha or '')[:12]}")
        if lesson.projection:
            say(f"   symptom projection: {len(lesson.projection['lines'])} lines")
        say("\n3. Weeks later it fails again on another machine:")
        exact = eng.context({"signature_source": RECURRENCE})
        say(_indent(card(exact)))
        say(f"\n4. Someone describes it in their own words: \"{VARIANT}\"")
        similar = eng.context({"task": VARIANT, "scope": "all-projects"})
        say(_indent(card(similar)))
        if options(ctx).json:
            emit(ctx, {"evidence": first.to_json(), "lesson": lesson.to_json(),
                       "recurrence": exact, "variant": similar})


def _indent(text: str) -> str:
    return "\n".join("   │ " + line for line in text.splitlines())
