"""An Arrow table's rows found by key without a Python object per row.

For each key (one or more columns) the rows' hashes are held sorted in numpy and
searched in O(log n); only the rows asked for become dicts. At the 10k bench vault
the signature links held as row dicts took 25 MB of Python objects (tracemalloc).
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pyarrow as pa


class KeyedRows:
    def __init__(self, table: pa.Table, *keys: tuple[str, ...]):
        self.table = table.combine_chunks()
        self._index = {key: _index(self.table, key) for key in keys}

    def rows(self, key: tuple[str, ...], values: Iterable[tuple]) -> list[dict]:
        """The rows whose `key` columns equal each of `values` (each once, in the order
        given), a value's rows in table order."""
        hashes, order = self._index[key]
        values = list(dict.fromkeys(values))
        places = []
        for value in values:
            h = hash(value)
            places.append(order[np.searchsorted(hashes, h, "left"):
                                np.searchsorted(hashes, h, "right")])
        if not values or not sum(map(len, places)):
            return []
        found = iter(self.table.take(pa.array(np.concatenate(places))).to_pylist())
        out = []
        for value, rows in zip(values, places):
            for _ in range(len(rows)):
                row = next(found)
                if tuple(row[c] for c in key) == value:   # not merely an equal hash
                    out.append(row)
        return out


def _index(table: pa.Table, key: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(each row's hash of its `key` values, sorted; the rows in that order: a stable
    sort, so rows of one value stay in table order)."""
    columns = [table[name].to_pylist() for name in key]
    hashes = np.fromiter((hash(value) for value in zip(*columns)), np.int64, table.num_rows)
    order = np.argsort(hashes, kind="stable")
    return hashes[order], order
