"""An Arrow table's rows found by key without a Python object per row.

For each key (one or more columns) the rows' hashes are held sorted in numpy and
searched in O(log n); only the rows asked for become dicts. At the 10k bench vault
the signature links held as row dicts took 25 MB of Python objects (tracemalloc).
"""

from __future__ import annotations

from typing import Callable, Iterable

import numpy as np
import pyarrow as pa


class KeyedRows:
    """Rows by column keys (`keys`: tuples of column names) and by derived keys
    (`derived`: name -> (column, keys_of), a row found under each key `keys_of` gives
    for its value in that column; each key once per row)."""

    def __init__(self, table: pa.Table, *keys: tuple[str, ...],
                 derived: dict[str, tuple[str, Callable[[str], Iterable[str]]]] | None = None,
                 fragment: int = -1):
        self.table = table.combine_chunks()
        self.fragment = fragment   # the newest table fragment read (`resident._since`)
        self._derived = dict(derived or {})
        self._index = self._indexes(self.table, keys)

    def _indexes(self, table: pa.Table, keys) -> dict:
        index = {key: _index(table, key) for key in keys}
        for name, (column, keys_of) in self._derived.items():
            index[name] = _derived_index(table[column].to_pylist(), keys_of)
        return index

    def extend(self, table: pa.Table, fragment: int) -> "KeyedRows":
        """These rows and `table`'s after them, as one new KeyedRows (this one stays as
        it is for its readers); only the added rows are hashed."""
        grown = object.__new__(KeyedRows)
        grown.table = pa.concat_tables([self.table, table.cast(self.table.schema)]
                                       ).combine_chunks()
        grown.fragment, grown._derived = fragment, self._derived
        offset, added = self.table.num_rows, self._indexes(
            table, [key for key in self._index if key not in self._derived])
        grown._index = {}
        for key, (hashes, rows) in self._index.items():
            more, more_rows = added[key]
            merged = np.concatenate([hashes, more])
            order = np.argsort(merged, kind="stable")   # a value's rows stay in table order
            grown._index[key] = (merged[order], np.concatenate([rows, more_rows + offset])[order])
        return grown

    def _matches(self, key, row: dict, value: tuple) -> bool:
        if key in self._derived:
            column, keys_of = self._derived[key]
            return value[0] in keys_of(row[column])
        return tuple(row[c] for c in key) == value

    def rows(self, key: tuple[str, ...] | str, values: Iterable[tuple]) -> list[dict]:
        """The rows whose `key` columns equal each of `values` (for a derived key: whose
        derived keys hold each value[0]), each value once, in the order given, a value's
        rows in table order."""
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
                if self._matches(key, row, value):   # not merely an equal hash
                    out.append(row)
        return out


def _index(table: pa.Table, key: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(each row's hash of its `key` values, sorted; the rows in that order: a stable
    sort, so rows of one value stay in table order)."""
    columns = [table[name].to_pylist() for name in key]
    hashes = np.fromiter((hash(value) for value in zip(*columns)), np.int64, table.num_rows)
    order = np.argsort(hashes, kind="stable")
    return hashes[order], order


def _derived_index(values: list, keys_of) -> tuple[np.ndarray, np.ndarray]:
    """As `_index`, for a row under each of its derived keys (hashed as 1-tuples)."""
    hashes, rows = [], []
    for row, value in enumerate(values):
        for key in keys_of(value or ""):
            hashes.append(hash((key,)))
            rows.append(row)
    hashes_np, rows_np = np.array(hashes, np.int64), np.array(rows, np.int64)
    order = np.argsort(hashes_np, kind="stable")
    return hashes_np[order], rows_np[order]
