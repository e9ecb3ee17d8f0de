"""Where the shared failure data set is: `$POIMEN_DATA`, else `../shared` beside the repo."""
import os
from pathlib import Path

_REPO = Path(__file__).resolve().parents[1]
_CANDIDATES = [Path(p) for p in [os.environ.get("POIMEN_DATA")] if p] + [
    _REPO.parent / "shared" / "data" / "failures"]
FAILURES = next((p for p in _CANDIDATES if p.is_dir()), _CANDIDATES[0])
