"""Read-path latency and memory on an existing vault, without building one.

The scale leg of bench/run.py (in-process lookups with their floors, a real `mem serve`,
a real `mem lsp`, a py-spy profile of the lookups) for a vault built elsewhere, e.g. one
built in two imports or whose build was stopped part way.

    .venv/bin/python bench/vault_latency.py VAULT [--queries 60] [--work DIR] [--no-profile]
        [--in-process-only] [--resident-rows N]

`--resident-rows` sets the resident copies' bound (`poimen.resident.MAX_ROWS`) for the
in-process leg, e.g. to hold every copy of a 100k vault.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import corpus
import hotspots
import latency
from run import RESULTS, machine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--data", type=Path, default=corpus.DEFAULT_DATA)
    parser.add_argument("--work", type=Path, default=Path("/tmp/poimen-bench"))
    parser.add_argument("--no-profile", action="store_true", help="skip the py-spy leg")
    parser.add_argument("--in-process-only", action="store_true",
                        help="skip mem serve, mem lsp and the profile")
    parser.add_argument("--resident-rows", type=int, default=None,
                        help="rows per table the in-process resident copies may hold")
    args = parser.parse_args()
    from poimen import resident
    from poimen.engine import Engine

    if args.resident_rows is not None:
        resident.MAX_ROWS = args.resident_rows
    rows = corpus.load(args.data)
    requests = latency.queries(rows, args.queries)
    result = {"machine": machine(), "vault": corpus.shown(args.vault),
              "stats": dict(Engine(args.vault, "bench").stats(), vault=corpus.shown(args.vault))}
    result["in_process"] = latency.in_process(args.vault, requests)
    result["in_process"]["resident_rows"] = resident.MAX_ROWS
    result["in_process"]["process"] = latency.rss_mb(os.getpid())
    if not args.in_process_only:
        result["http"] = latency.over_http(args.vault, requests,
                                           args.work / "serve-vault-latency.log")
        result["lsp"] = latency.over_lsp(args.vault, args.work / "lsp-vault-latency",
                                         rows["cases"])
        if not args.no_profile:
            result["hotspots"] = hotspots.profile(args.vault, args.queries)
    result["machine"]["loadavg_end"] = [round(x, 1) for x in os.getloadavg()]
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-vault.json"
    out.write_text(json.dumps(result, indent=2))
    print(out)


if __name__ == "__main__":
    main()
