"""Database drivers and servers not read elsewhere: MySQL driver codes (`ER_…`) and MongoDB
driver errors, and Redis server error replies."""

from __future__ import annotations

import re

from ..rules import Ctx, Hit, block, line

_ACCOUNT = re.compile(r"'[^'@\s]{0,80}'@'[^'\s]{0,255}'")


def _mysql_code(ctx: Ctx, i: int, m: re.Match):
    """Node/PHP drivers prefix the server's message with its symbol; the account
    (`'user'@'host'`) is the instance."""
    return Hit("mysql", m["kind"], _ACCOUNT.sub("'<user>'@'<host>'", m["msg"]), (), i, i)


RULES = [
    block("mysql-driver-code", "mysql", "er_",
          r"\b(?P<kind>ER_[A-Z0-9_]{2,80}): (?P<msg>\S.+?)\s*$", _mysql_code),
    # a Redis error reply: an upper-case code, then the server's sentence, whatever client
    # (redis-rb, ioredis, StackExchange.Redis) wraps it
    line("redis-error-reply", "redis", "err |misconf |wrongtype |noauth |noperm |readonly |"
         "loading |busy |noscript |execabort |oom ",
         r"(?:^|[\s'\"(>:-])(?P<kind>ERR|MISCONF|WRONGTYPE|NOAUTH|NOPERM|READONLY|LOADING|BUSY|"
         r"NOSCRIPT|EXECABORT|OOM) (?P<msg>[A-Z][^'\"\n]{8,}?)[\s:'\".]*$"),
    line("mongodb-driver", "mongodb", "mongo",
         r"\b(?P<kind>Mongo\w{0,40}Error): (?P<msg>\S.+?)\s*$"),
]
