"""The engine stays pure: no LSP or HTTP framework is imported by engine modules."""

import subprocess
import sys

ENGINE_MODULES = ["poimen.engine", "poimen.lookup", "poimen.vault", "poimen.store",
                  "poimen.signatures", "poimen.symptoms", "poimen.derived", "poimen.redact",
                  "poimen.references", "poimen.skills", "poimen.budget", "poimen.gate",
                  "poimen.team.vault", "poimen.team.objects", "poimen.team.sync"]
ADAPTER_PACKAGES = ["pygls", "lsprotocol", "fastapi", "starlette", "uvicorn", "mcp"]


def test_engine_imports_no_adapter_framework():
    code = ("import sys\n"
            f"for m in {ENGINE_MODULES!r}: __import__(m)\n"
            f"print(sorted(p for p in {ADAPTER_PACKAGES!r} if p in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]", f"engine modules pulled in adapter packages: {out}"
