"""Derived-content filter: recognise ingested text that is poimen's own output.

A skill or reference chunk that poimen emitted can come back inside a transcript; it
must never become evidence. `record_artifact` writes each emitted artifact to the
vault's manifest, `ArtifactIndex.check` tells whether a record quotes one.
"""

from .index import (DEFAULT_THRESHOLD, REFERENCE_WINDOW, ArtifactIndex, DerivedMatch,
                    Violation, parse_thresholds, verify_evidence)
from .manifest import (KINDS, MANIFEST, Artifact, ManifestError, ManifestPosition, read_appended,
                       read_manifest, record_artifact, record_artifacts)
from .shingles import SCHEME, SHINGLE_WORDS, normalise_for_shingles, shingles

__all__ = ["DEFAULT_THRESHOLD", "KINDS", "MANIFEST", "REFERENCE_WINDOW", "SCHEME",
           "SHINGLE_WORDS", "Artifact", "ArtifactIndex", "DerivedMatch", "ManifestError",
           "ManifestPosition", "Violation", "normalise_for_shingles", "parse_thresholds", "read_appended",
           "read_manifest", "record_artifact", "record_artifacts", "shingles", "verify_evidence"]
