"""Ruby exceptions (interpreter, RSpec, CLAide reports), Rails, CocoaPods and Vagrant."""

from __future__ import annotations

import re

from ..rules import Ctx, Hit, block, line

# a Ruby exception class, namespaced or not (`NameError`, `ActiveRecord::PendingMigrationError`)
_CLASS = r"(?:[A-Z]\w{0,60}::){0,6}[A-Z]\w{0,80}"
_KIND_LINE = re.compile(rf"^\s*(?P<kind>{_CLASS}):\s*$")


def _rspec(ctx: Ctx, i: int, m: re.Match):
    """`Failure/Error: <code>` names the test line; the failure is the exception class and
    message below it. Without an exception (a plain expectation), no hit: the code line
    alone would merge every failure of that line."""
    lines = ctx.lines
    for j in range(i + 1, min(len(lines), i + 4)):
        kind = _KIND_LINE.match(lines[j])
        if kind:
            body = [t.strip() for t in lines[j + 1:j + 3] if t.strip()]
            if body and not body[0].startswith("#"):
                return Hit("ruby", kind["kind"], body[0], (), i, j + 1)
    return None


def _vagrantfile(ctx: Ctx, i: int, m: re.Match):
    """Vagrant's Vagrantfile load error: the `Message:` line below the prose is the failure."""
    for j in range(i + 1, min(len(ctx.lines), i + 14)):
        msg = re.match(r"^\s*Message: (?P<msg>.+)$", ctx.lines[j])
        if msg:
            return Hit("vagrant", "vagrantfile-load", msg["msg"], (), i, j)
    return None


def _pod_headline(ctx: Ctx, i: int, m: re.Match):
    """`[!] headline` of CocoaPods (or fastlane, when the text names it: both print CLAide's
    `[!]`). A headline ending in a colon announces its cause on the next line: kept, unless
    that line is itself a heading (`In Podfile:`)."""
    msg = m["msg"]
    if msg.endswith(":"):
        detail = next((t.strip() for t in ctx.lines[i + 1:i + 4] if t.strip()), "")
        detail = "" if detail.endswith(":") else detail
        msg = f"{msg} {detail}".strip()
    tool = "fastlane" if ctx.has("fastlane") else "cocoapods"
    return Hit(tool, "error", msg, (), i, i + 1 if msg != m["msg"] else i)


RULES = [
    # ruby's own uncaught-exception line: `file.rb:12:in `meth': message (Class)`
    line("ruby-exception", "ruby", ".rb:",
         rf"(?P<x_file>[^\s:`']{{1,300}}\.rb):\d+:in [`'][^']{{0,200}}': (?P<msg>.+) "
         rf"\((?P<kind>{_CLASS})\)\s*$"),
    block("rspec-failure", "ruby", "failure/error:", r"^\s*Failure/Error: ", _rspec),
    # CLAide's (CocoaPods) exception report: `LoadError - message`
    line("ruby-claide-exception", "ruby", "error - |exception - ",
         rf"^\s*(?P<kind>{_CLASS}(?:Error|Exception)) - (?P<msg>.+)$"),
    line("rails-error", "rails", "activerecord::|actionview::|actioncontroller::|activesupport::|"
         "activemodel::|actiondispatch::",
         r"(?P<kind>(?:ActiveRecord|ActionView|ActionController|ActiveSupport|ActiveModel|"
         r"ActionDispatch)(?:::\w{1,80}){1,4})(?::| -|,) (?P<msg>.+?)(?: \(\1\))?$"),
    # a message closed by its class, wrapped off its `file.rb:N:in` line
    line("ruby-exception-tail", "ruby", "error)|exception)",
         rf"^[\s`'\"]*(?P<msg>[A-Z].{{10,}}?) \((?P<kind>{_CLASS}(?:Error|Exception))\)[\s`'\".]*$",
         needs="ruby"),
    block("cocoapods-error", "cocoapods", "[!] ", r"^\s*\[!\] (?P<msg>\S.+?)\s*$", _pod_headline),
    block("vagrantfile-load", "vagrant", "there was an error loading a vagrantfile",
          r"There was an error loading a Vagrantfile", _vagrantfile),
]
