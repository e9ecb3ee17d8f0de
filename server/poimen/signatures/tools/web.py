"""PHP fatal errors, Composer and Apache httpd."""

from __future__ import annotations

import re

from ..rules import Ctx, Hit, block, line

def _php_fatal(ctx: Ctx, i: int, m: re.Match):
    """`PHP Fatal error:  Uncaught Error: msg in /path/file.php:12`: the file and line are
    the instance; an uncaught exception's class is the kind."""
    return Hit("php", m["exc"] or m["level"], m["msg"], (), i, i)


def _composer_unresolvable(ctx: Ctx, i: int, m: re.Match):
    """The headline is the same for every conflict: the first problem's line says which."""
    for j in range(i + 1, min(len(ctx.lines), i + 8)):
        problem = re.match(r"^\s*- (?P<msg>\S.+)$", ctx.lines[j])
        if problem:
            return Hit("composer", "unresolvable", problem["msg"], (), i, j)
    return None


def _apache_syntax(ctx: Ctx, i: int, m: re.Match):
    """`AH00526: Syntax error on line N of FILE:` names where; the next line says what."""
    if i + 1 >= len(ctx.lines):
        return None
    detail = re.sub(r"^.{0,80}?\w\[\d+\]: ", "", ctx.lines[i + 1]).strip()
    return Hit("apache", "AH00526", f"Syntax error: {detail}", (), i, i + 1) if detail else None


RULES = [
    block("php-fatal", "php", "fatal error|parse error",
          r"\b(?:PHP )?(?P<level>Fatal error|Parse error):\s+(?:Uncaught (?P<exc>[\w\\]{1,200}): )?"
          r"(?P<msg>.+?) in (?:\S+?\.php|Standard input code)(?::\d+| on line \d+)", _php_fatal),
    block("composer-unresolvable", "composer", "could not be resolved to an installable set",
          r"Your requirements could not be resolved to an installable set of packages",
          _composer_unresolvable),
    block("apache-syntax", "apache", "ah00526", r"AH00526: Syntax error on line \d+ of \S+", _apache_syntax),
    # the error log: [module:level] [pid N(:tid N)] [client ip:port] (AHnnnnn: )(file: )msg
    line("apache-error-log", "apache", ":error]|:crit]|:alert]|:emerg]",
         r"\[\w+:(?P<kind>error|crit|alert|emerg)\] \[pid \d+(?::tid \d+)?\] (?:\[client \S+\] )?"
         r"(?:AH\d{5}: )?(?:(?P<x_file>/\S+): )?(?P<msg>.+)$"),
]
