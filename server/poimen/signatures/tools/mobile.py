"""Mobile toolchains: React Native and Metro, Android resource linking (AAPT2)."""

from __future__ import annotations

from ..rules import line

RULES = [
    line("react-native-invariant", "react-native", "invariant violation",
         r"Invariant Violation: (?P<msg>\S.+?)\s*$", "invariant-violation"),
    line("metro-unresolved-module", "react-native", "unable to resolve module",
         r"(?P<msg>Unable to resolve module [`'\"]?[^\s`'\"]+[`'\"]?) from [`'\"]?(?P<x_file>[^\s`'\"]+)",
         "unresolved-module"),
    line("android-aapt", "android", "aapt: error:|aapt2 error:",
         r"AAPT2? ?:? ?error: (?P<msg>\S.+?)\s*$", "aapt"),
]
