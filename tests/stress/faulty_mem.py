"""Run the real `mem` CLI with a SIGKILL planted inside its N-th write.

    python faulty_mem.py <mem args…>      with POIMEN_CRASH=<where>:<n>:<seed>

`log:N`   the N-th write to a log segment puts a random prefix of its bytes on disk,
          then the process kills itself: a torn record, mid-append.
`lance:N` the N-th LanceDB table write runs in a thread and the process kills itself
          a random 0–30 ms later, usually while LanceDB is writing its files.
`push:N`  (a team vault) the N-th chunk put to the object store succeeds and the process
          kills itself before it records the push: the acknowledgement of the put is lost.
Without POIMEN_CRASH this is plain `mem`. Nothing in poimen is changed on disk: the
patches live in this process only.
"""
from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _plant_log_fault(n: int, rng: random.Random) -> None:
    real_write = os.write
    seen = [0]

    def write(fd: int, data) -> int:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if "/log/segments/" in target:
            seen[0] += 1
            if seen[0] == n:
                data = bytes(data)
                real_write(fd, data[:rng.randrange(1, max(len(data), 2))])
                _die()
        return real_write(fd, data)

    os.write = write


def _plant_lance_fault(n: int, rng: random.Random) -> None:
    from poimen import store

    real_put = store.Store.put
    seen = [0]

    def put(self, name, rows, upsert=False):
        if rows:
            seen[0] += 1
            if seen[0] == n:
                threading.Thread(target=real_put, args=(self, name, rows, upsert),
                                 daemon=True).start()
                time.sleep(rng.uniform(0, 0.03))
                _die()
        return real_put(self, name, rows, upsert)

    store.Store.put = put


def _plant_push_fault(n: int, rng: random.Random) -> None:
    from poimen.team import sync

    real_write_json = sync.write_json
    seen = [0]

    def write_json(path, value):
        if path.name == "push.json":
            seen[0] += 1
            if seen[0] == n:
                _die()
        return real_write_json(path, value)

    sync.write_json = write_json


def main() -> None:
    spec = os.environ.get("POIMEN_CRASH", "")
    if spec:
        where, n, seed = spec.split(":")
        rng = random.Random(int(seed))
        plant = {"log": _plant_log_fault, "lance": _plant_lance_fault,
                 "push": _plant_push_fault}[where]
        plant(int(n), rng)
    from poimen.cli import main as mem

    mem(sys.argv[1:])


if __name__ == "__main__":
    main()
