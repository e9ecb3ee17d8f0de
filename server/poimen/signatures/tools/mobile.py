"""Mobile toolchains: React Native and Metro, Android (AAPT2, adb installs, the emulator),
SwiftPM tools versions."""

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
    line("adb-install-failed", "adb", "install_failed_|install_parse_failed_",
         r"\b(?P<kind>INSTALL_(?:PARSE_)?FAILED_[A-Z_]{2,80})(?::\s*(?P<msg>[^\]]+?))?\]?\s*$"),
    line("android-emulator-acceleration", "android-emulator", "emulation currently requires",
         r"(?P<msg>\w+ emulation currently requires hardware acceleration)", "acceleration"),
    line("swiftpm-tools-version", "swift", "is using swift tools version",
         r"(?P<msg>package at '(?P<x_path>[^']{1,300})' is using Swift tools version \S+ but the "
         r"installed version is \S+)", "tools-version"),
]
