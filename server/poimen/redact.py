"""Secret redaction: every credential in raw text becomes ``<redacted:KIND>`` before logging.

Why rules of our own rather than detect-secrets (evaluated twice, 1.5.0; figures in
docs/RELIABILITY.md): its ``scan_line`` reports values, not spans; what it catches that
named rules miss it catches by entropy, which also flags every git sha, digest and
integrity field we must keep; and it is about 8x slower. The formats below follow the
published token layouts, checked against gitleaks' rule list; a 32-64 hex value counts
as a secret only after a credential-shaped name (``*_KEY``, ``*-TOKEN``, ``*_SECRET``).

Linear time on hostile input: every quantifier is bounded; long runs are possessive and
either exclude a character of their rule's literal anchor or carry a look-behind that
lets only the first anchor of a run start a match; a rule runs only when its anchor
occurs; case-insensitive rules run on the lowered text (same length, so spans agree).
All spans are found on the input, merged where they overlap, and replaced in one pass.
Markers already present are never touched, so redaction is idempotent.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterator

MARKER = re.compile(r"<redacted:[a-z0-9-]{1,40}>")
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_KEY_MAX_CHARS = 1_000_000          # a private-key block longer than this is "no END"


@dataclass(frozen=True)
class Redacted:
    text: str
    findings: tuple[tuple[str, int], ...]   # (kind, count), sorted by kind


_PLACEHOLDER = re.compile(
    r"(?i)\*+|x{3,}|•+|\.{3,}|-+|_+|<[^>]*>|\[[^\]]*\]|\(\w*\)|\$\{[^}]*\}|\$[a-z_][a-z0-9_]*"
    r"|\{\{.*\}\}|%\(?\w*\)?s|%s|\?+|redacted|filtered|masked|hidden|secret|password|token"
    r"|null|none|nil|undefined|true|false|yes|no|on|off|empty|your[_-][\w-]*|[a-z_][\w.]*[(\[].*")
_NUMBER = re.compile(r"[+-]?\d+(?:[.:]\d+)*[a-z%]{0,3}")


def _plausible(value: str) -> bool:
    """A value that could be a password: not a placeholder, a boolean or code."""
    return bool(value) and not _PLACEHOLDER.fullmatch(value)


def _credential(value: str) -> bool:
    """A value that looks like a machine credential, not a word in prose or a count."""
    if not _plausible(value) or _NUMBER.fullmatch(value) or any(c.isspace() for c in value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return len(value) >= 20 or (len(value) >= 8 and has_digit and has_alpha)


def _mixed(value: str) -> bool:
    """Random base62 bodies have digits and capitals; package names do not."""
    return sum(c.isdigit() for c in value) >= 2 and sum(c.isupper() for c in value) >= 2


def _always(value: str) -> bool:
    return True


@dataclass(frozen=True)
class _Rule:
    kind: str | Callable[[str], str]   # fixed, or derived from the matched keyword
    pattern: re.Pattern[str]
    anchors: tuple[str, ...]           # one must occur (lowercase when ``fold``)
    fold: bool = False                 # match on the lowered text
    check: Callable[[str], bool] = _always
    word_start: bool = False           # the match may not start inside a word
    context: tuple[str, ...] = ()      # one of these must occur earlier on the same line


def _token(kind: str, regex: str, *anchors: str, check: Callable[[str], bool] = _always) -> _Rule:
    return _Rule(kind, re.compile(f"(?P<s>{regex})"), anchors, check=check, word_start=True)


_VALUE = (r"""(?:"(?P<s1>[^"\r\n]{1,4096}+)"|'(?P<s2>[^'\r\n]{1,4096}+)'"""
          r"""|(?P<s3>[^\s"'`<>&]{1,4096}+))""")
_SEP = r"""["']?[ \t]{0,4}(?P<sep>:=|=>|[:=])[ \t]{0,4}"""
_KEYWORDS = (r"password|passwd|passphrase|pass(?<![a-z]pass)(?![a-z])|secret|token|credentials?"
             r"|api[_-]?key|apikey|(?:access|auth|private|account|storage|master|encryption"
             r"|signing|client)[_-]?key")


def _keyword_kind(keyword: str) -> str:
    for part, kind in (("pass", "password"), ("secret", "secret"), ("token", "token"),
                       ("cred", "credential")):
        if part in keyword:
            return kind
    return "api-key"


def _hex_name_kind(suffix: str) -> str:
    """A 32-64 hex value after a credential-shaped name (`DD_APP_KEY=`, `X-Api-Token:`)."""
    return {"key": "api-key", "pat": "token"}.get(suffix, suffix)


_RULES: tuple[_Rule, ...] = (
    # Tokens with a published prefix (checked first: their kind wins an overlap).
    _token("aws-access-key-id", r"A(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|PKA|ROA"
           r"|SCA)[A-Z0-9]{16}(?![A-Za-z0-9])", "AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA",
           "AIPA", "ANPA", "ANVA", "APKA", "AROA", "ASCA"),
    _token("gcp-api-key", r"AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])", "AIza"),
    _token("gcp-oauth-secret", r"GOCSPX-[0-9A-Za-z_-]{28}(?![0-9A-Za-z_-])", "GOCSPX-"),
    _token("gcp-access-token", r"ya29\.[0-9A-Za-z_-]{20,2048}+", "ya29."),
    _token("github-token", r"gh[pousr]_[A-Za-z0-9]{36,251}+(?![A-Za-z0-9_])",
           "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    _token("github-token", r"github_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{22,255}+",
           "github_pat_"),
    _token("gitlab-token", r"gl(?:pat|dt|rt|ptt|ft|soat|oas|cbt|imt)-[0-9A-Za-z_-]{20,64}+",
           "glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "gloas-", "glcbt-", "glimt-"),
    _token("slack-token", r"xox(?<![A-Za-z0-9-]xox)[abposr]-[A-Za-z0-9-]{10,255}+", "xox"),
    _token("slack-token", r"xapp-(?<![A-Za-z0-9-]xapp-)[A-Za-z0-9-]{20,255}+", "xapp-"),
    _Rule("slack-webhook", re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/"
          r"(?P<s>[A-Za-z0-9_/-]{20,255}+)"), ("hooks.slack.com/",)),
    _token("stripe-key", r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,255}+", "k_live_", "k_test_"),
    _token("stripe-key", r"whsec_[A-Za-z0-9]{20,255}+", "whsec_"),
    _token("npm-token", r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])", "npm_"),
    _token("pypi-token", r"pypi-AgE(?<![A-Za-z0-9_-]pypi-AgE)[A-Za-z0-9_-]{50,4096}+", "pypi-AgE"),
    _token("sendgrid-key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])", "SG."),
    _token("twilio-api-key", r"SK[0-9a-f]{32}(?![0-9A-Za-z])", "SK"),
    _token("anthropic-key", r"sk-ant-(?<![A-Za-z0-9_-]sk-ant-)[A-Za-z0-9_-]{20,1024}+", "sk-ant-"),
    _token("openai-key", r"sk-(?<![A-Za-z0-9_-]sk-)[A-Za-z0-9_-]{20,1024}+", "sk-", check=_mixed),
    _token("huggingface-token", r"hf_[A-Za-z0-9]{30,64}+(?![A-Za-z0-9])", "hf_", check=_mixed),
    _token("digitalocean-token", r"do[por]_v1_[a-f0-9]{64}(?![A-Za-z0-9])",
           "dop_v1_", "doo_v1_", "dor_v1_"),
    _token("heroku-api-key", r"HRKU-[A-Za-z0-9_-]{60}(?![A-Za-z0-9_-])", "HRKU-"),
    _token("shopify-token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9])", "shp"),
    _token("vault-token", r"hv[sbr]\.[A-Za-z0-9_-]{24,512}+", "hvs.", "hvb.", "hvr."),
    _token("databricks-token", r"dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])", "dapi"),
    _token("age-secret-key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", "AGE-SECRET-KEY-1"),
    _token("postman-key", r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}", "PMAK-"),
    _token("newrelic-key", r"NRAK-[A-Z0-9]{27}(?![A-Za-z0-9])", "NRAK-"),
    _token("linear-key", r"lin_api_[A-Za-z0-9]{40}(?![A-Za-z0-9])", "lin_api_"),
    _token("atlassian-token", r"ATATT3(?<![A-Za-z0-9_=-]ATATT3)[A-Za-z0-9_=-]{100,512}+", "ATATT3"),
    _token("square-token", r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,60}+", "sq0atp-", "sq0csp-"),
    _token("mailgun-key", r"(?:pub)?key-(?<![A-Za-z0-9_-]key-)[0-9a-f]{32}(?![0-9A-Za-z])",
           "key-"),
    _Rule("twilio-auth-token", re.compile(r"AC[0-9a-f]{32}[\"']?[ \t]{0,4}[,:][ \t]{0,4}"
          r"[\"']?(?P<s>[0-9a-f]{32})(?![0-9A-Za-z])"), ("AC",)),
    _token("doppler-token", r"dp\.(?:st|ct|sa|scim|audit|pt)\.[A-Za-z0-9_.-]{40,128}+", "dp."),
    _token("pulumi-token", r"pul-[a-f0-9]{40}(?![A-Za-z0-9])", "pul-"),
    _token("grafana-token", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}(?![A-Za-z0-9])", "glsa_"),
    _token("grafana-token", r"glc_[A-Za-z0-9+/]{32,400}+={0,2}", "glc_"),
    _token("sentry-token", r"sntry[su]_[A-Za-z0-9+/=_-]{40,512}+", "sntrys_", "sntryu_"),
    _token("flyio-token", r"fo1_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])", "fo1_"),
    _token("planetscale-token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9=._-]{32,64}+", "pscale_"),
    _token("rubygems-key", r"rubygems_[a-f0-9]{48}(?![A-Za-z0-9])", "rubygems_"),
    _token("clojars-token", r"CLOJARS_[a-z0-9]{60}(?![A-Za-z0-9])", "CLOJARS_"),
    _token("dynatrace-token", r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}(?![A-Za-z0-9])", "dt0c01."),
    _token("easypost-key", r"EZ[AT]K[a-zA-Z0-9]{54}(?![A-Za-z0-9])", "EZAK", "EZTK"),
    _token("frameio-token", r"fio-u-[A-Za-z0-9_=-]{64}(?![A-Za-z0-9_=-])", "fio-u-"),
    _token("prefect-key", r"pnu_[A-Za-z0-9]{36}(?![A-Za-z0-9])", "pnu_"),
    _token("readme-key", r"rdme_[a-z0-9]{70}(?![A-Za-z0-9])", "rdme_"),
    _token("scalingo-token", r"tk-us-[A-Za-z0-9_-]{48}(?![A-Za-z0-9_-])", "tk-us-"),
    _token("openai-key", r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,1024}+", "sk-proj-",
           "sk-svcacct-", "sk-admin-"),
    _token("huggingface-token", r"api_org_[A-Za-z0-9]{34}(?![A-Za-z0-9])", "api_org_"),
    _token("adafruit-key", r"aio_[A-Za-z0-9]{28}(?![A-Za-z0-9])", "aio_"),
    _token("typeform-token", r"tfp_[A-Za-z0-9_.=-]{59}(?![A-Za-z0-9_.=-])", "tfp_"),
    _token("mapbox-token", r"sk\.eyJ[A-Za-z0-9_-]{20,400}+\.[A-Za-z0-9_-]{20,100}+", "sk.eyJ"),
    _token("shippo-token", r"shippo_(?:live|test)_[a-f0-9]{40}(?![A-Za-z0-9])", "shippo_"),
    _token("airtable-token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}(?![A-Za-z0-9])", "pat"),
    _token("alibaba-access-key-id", r"LTAI[A-Za-z0-9]{20}(?![A-Za-z0-9])", "LTAI"),
    _token("artifactory-key", r"AKCp[A-Za-z0-9]{69}(?![A-Za-z0-9])", "AKCp"),
    _token("aws-bedrock-key", r"ABSK[A-Za-z0-9+/]{109,269}+={0,2}", "ABSK"),
    _token("terraform-token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}+", ".atlasv1."),
    _token("mailchimp-key", r"[a-f0-9]{32}-us[0-9]{1,2}(?![A-Za-z0-9])", "-us"),
    _Rule("teams-webhook", re.compile(r"\.webhook\.office\.com/webhookb2/(?P<s>[A-Za-z0-9@/-]"
          r"{60,300}+)"), (".webhook.office.com/",)),
    _token("notion-token", r"(?:ntn_[0-9]{11}|secret_)[A-Za-z0-9]{35,43}(?![A-Za-z0-9])",
           "ntn_", "secret_", check=_mixed),
    _token("octopus-key", r"API-[A-Z0-9]{26}(?![A-Za-z0-9])", "API-"),
    _token("openshift-token", r"sha256~[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])", "sha256~"),
    _token("perplexity-key", r"pplx-[A-Za-z0-9]{48}(?![A-Za-z0-9])", "pplx-"),
    _token("sendinblue-key", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}(?![A-Za-z0-9])", "xkeysib-"),
    _token("sourcegraph-token", r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}(?![A-Za-z0-9])",
           "sgp_"),
    _token("duffel-token", r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}(?![A-Za-z0-9_=-])", "duffel_"),
    _token("1password-token", r"ops_eyJ[A-Za-z0-9+/]{250,8192}+={0,3}", "ops_eyJ"),
    _token("infracost-token", r"ico-[A-Za-z0-9]{32}(?![A-Za-z0-9])", "ico-"),
    _token("harness-key", r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"
           r"(?![A-Za-z0-9])", "pat.", "sat."),
    _Rule("telegram-bot-token", re.compile(r"(?<=\d):(?P<s>AA[0-9A-Za-z_-]{33})(?![0-9A-Za-z_-])"),
          (":AA",)),
    _Rule("discord-webhook", re.compile(r"discord(?:app)?\.com/api/webhooks/[0-9]{10,25}/"
          r"(?P<s>[A-Za-z0-9_-]{30,255}+)"), ("/api/webhooks/",)),
    _token("jwt", r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{5,8192}+\.eyJ[A-Za-z0-9_-]{5,16384}+"
           r"\.[A-Za-z0-9_-]{0,8192}+", "eyJ"),
    # Secrets known by their surroundings.
    _Rule("aws-secret-access-key", re.compile(r"secret[_-]?access[_-]?key" + _SEP +
          r"""["']?(?P<s>[a-z0-9/+]{40})(?![a-z0-9/+])"""), ("secret",), fold=True),
    _Rule("heroku-api-key", re.compile(r"heroku[a-z0-9_.-]{0,30}+" + _SEP + r"""["']?(?P<s>"""
          r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"), ("heroku",), fold=True),
    _Rule("azure-storage-key", re.compile(r"(?:accountkey|sharedaccesskey)=(?P<s>[^;\s\"'<>]"
          r"{20,1024}+)"), ("accountkey=", "sharedaccesskey="), fold=True),
    _Rule("azure-sas-signature", re.compile(r"[?&]sig=(?P<s>[A-Za-z0-9%+/=]{20,512}+)"),
          ("sig=",)),
    _Rule("npm-token", re.compile(r"_auth(?:token)?[ \t]{0,4}=[ \t]{0,4}[\"']?"
          r"(?P<s>[^\s\"'<>]{1,4096}+)"), ("_auth",), fold=True, check=_plausible),
    _Rule("docker-auth", re.compile(r"\"(?:auth|identitytoken|registrytoken)\"[ \t]{0,4}:"
          r"[ \t]{0,4}\"(?P<s>[^\"\r\n<>]{1,4096}+)\""), ('"auth"', '"identitytoken"',
          '"registrytoken"'), check=_plausible),
    _Rule("url-password", re.compile(r"://(?P<u>[^\s:/@?#\"'<>]{0,128}+):"
          r"(?P<s>[^\s/@?#\"'<>]{1,256}+)@"), ("://",), check=_plausible),
    _Rule("authorization", re.compile(r"(?:proxy-)?authorization[\"']?[ \t]{0,4}[:=][ \t]{0,4}"
          r"[\"']?(?:(?P<scheme>bearer|basic|token|digest|negotiate|ntlm|bot|apikey|sso-key"
          r"|aws4-hmac-sha256)[ \t]{1,4})?(?P<s>[^\s\"'<>,]{1,4096}+)"), ("authorization",),
          fold=True, check=_plausible),
    _Rule("azure-storage-key", re.compile(r'"value"[ \t]{0,4}:[ \t]{0,4}"(?P<s>[A-Za-z0-9+/]'
          r'{86}==)"'), ('"value"',)),
    _Rule("basic-auth", re.compile(r"auth[ \t]{0,2}=[ \t]{0,2}\([ \t]{0,2}[\"'][^\"'\r\n]"
          r"{1,128}+[\"'][ \t]{0,2},[ \t]{0,2}[\"'](?P<s>[^\"'\r\n]{1,256}+)[\"']"),
          ("auth",), check=_plausible),
    _Rule("cli-password", re.compile(r"sshpass(?:[ \t]{1,4}-[a-oq-zA-Z][^\s]{0,64}+){0,4}"
          r"[ \t]{1,4}-p[ \t]{0,3}" + _VALUE), ("sshpass",), check=_plausible),
    _Rule("vault-token", re.compile(r"vault[ \t]{1,4}login(?:[ \t]{1,4}-[^\s]{1,128}+){0,4}"
          r"[ \t]{1,4}(?P<s>[^\s\"'<>=-][^\s\"'<>=]{7,511}+)(?![^\s])"), ("vault",),
          check=_credential),
    _Rule(_hex_name_kind, re.compile(r"(?<=[a-z0-9])[_-](?P<kw>key|token|secret|pat)[\"']?"
          r"[ \t]{0,4}(?::=|=>|[:=])[ \t]{0,4}[\"']?(?P<s>[0-9a-f]{32,64})(?![0-9a-z])"),
          ("key", "token", "secret", "pat"), fold=True),
    _Rule("bearer-token", re.compile(r"bearer[ \t]{1,4}(?P<s>[a-z0-9._~+/=-]{16,4096}+)"),
          ("bearer",), fold=True, check=_credential),
    _Rule("cookie", re.compile(r"(?:set-)?cookie[ \t]{0,2}:[ \t]{0,4}(?P<s>[^\s<>]"
          r"[^\r\n<>]{0,4095}+)"), ("cookie",), fold=True, check=lambda v: "=" in v),
    _Rule("basic-auth", re.compile(r"(?:-u(?<=\s-u)|--user(?<=\s--user))[ \t=]{1,3}[\"']?"
          r"[^\s:\"'<>]{1,128}+:"
          r"(?P<s>[^\s\"'<>]{1,256}+)"), ("-u",), check=_plausible, context=("curl", "wget")),
    _Rule("cli-password", re.compile(r"-p(?<=\s-p)(?P<s>[^\s\"'<>-][^\s\"'<>]{0,255}+)"), ("-p",),
          check=_plausible, context=("mysql", "mariadb")),
    _Rule("cli-password", re.compile(r"-p(?<=\s-p)[ \t]{1,3}(?P<s>[^\s\"'<>-][^\s\"'<>]{0,255}+)"),
          ("-p",), check=_plausible, context=("login",)),
    _Rule(_keyword_kind, re.compile(r"--(?<=\s--)(?P<kw>password|passwd|token|secret|api-key"
          r"|client-secret|auth-token|access-token)[ \t]{1,3}(?P<s>[^\s\"'<>-][^\s\"'<>]"
          r"{0,4095}+)"), ("--",), fold=True, check=_plausible),
    _Rule(_keyword_kind, re.compile(r"(?P<kw>" + _KEYWORDS + r")(?:[_.-][a-z0-9]{1,16}+){0,3}"
          + _SEP + _VALUE), ("pass", "secret", "token", "cred", "key"), fold=True),
)
_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----")
_KEY_BODY = re.compile(r"[A-Za-z0-9+/=\r\n\\]{0,65536}+")


RETRY_VALUE_CHARS = 64   # a refused value this short is searched again for a secret


def _secret_span(m: re.Match[str]) -> tuple[int, int] | None:
    for name in ("s", "s1", "s2", "s3"):
        if name in m.re.groupindex and m.group(name) is not None:
            return m.span(name)
    return None


def _value_ok(rule: _Rule, m: re.Match[str], value: str) -> bool:
    """Keyword values: a password may be any plausible value; a token must look like one."""
    if "scheme" in m.re.groupindex:
        return _plausible(value) if m.group("scheme") else _credential(value)
    if "kw" not in m.re.groupindex:
        return rule.check(value)
    kind = _keyword_kind(m.group("kw"))
    loose = kind == "password" or (kind == "secret" and m.groupdict().get("sep") != ":")
    return _plausible(value) if loose else _credential(value)


class _LineContext:
    """Whether a needle occurs earlier on the current line; linear over increasing positions."""

    def __init__(self, hay: str, needles: tuple[str, ...]):
        self.hay, self.needles, self.pos, self.line, self.seen = hay, needles, 0, 0, -1

    def __call__(self, pos: int) -> bool:
        nl = self.hay.rfind("\n", self.pos, pos)
        if nl >= 0:
            self.line = nl + 1
        for needle in self.needles:
            self.seen = max(self.seen, self.hay.rfind(needle, max(self.pos - len(needle), 0), pos))
        self.pos = pos
        return self.seen >= self.line


def _rule_spans(rule: _Rule, text: str, hay: str, raw: bytes) -> Iterator[tuple[int, int, str]]:
    """Accepted matches of one rule. A match whose short value is refused is searched
    again from that value (it may start the next match: `Authorization: Authorization:
    t0ken`); a long refused value is skipped whole, which keeps floods linear."""
    if not any(a.encode() in raw for a in rule.anchors):
        return
    in_context = _LineContext(hay, rule.context) if rule.context else None
    pos = 0
    while (m := rule.pattern.search(hay, pos)) is not None:
        pos = max(m.end(), m.start() + 1)
        span = _secret_span(m)
        if span is None:
            continue
        found = _accepted(rule, m, text, span, in_context)
        if found is not None:
            yield found
        elif span[0] > m.start() and span[1] - span[0] <= RETRY_VALUE_CHARS:
            pos = span[0]


def _accepted(rule: _Rule, m: re.Match[str], text: str, span: tuple[int, int],
              in_context) -> tuple[int, int, str] | None:
    start, end = span
    if rule.word_start and m.start() > 0 and text[m.start() - 1] in _WORD \
            and "kw" not in m.re.groupindex:
        return None
    value = text[start:end]
    if "s3" in rule.pattern.groupindex and m.group("s3") is not None:
        if _PLACEHOLDER.fullmatch(value):
            return None
        value = value.rstrip(",;)]}.")
        end = start + len(value)
    if "<redacted:" in value or not _value_ok(rule, m, value):
        return None
    if in_context is not None and not in_context(m.start()):
        return None
    kind = rule.kind(m.group("kw")) if callable(rule.kind) else rule.kind
    return start, end, kind


def _private_key_spans(text: str, raw: bytes) -> Iterator[tuple[int, int, str]]:
    """BEGIN … END blocks; a block with no END nearby runs to the end of its base64 body."""
    if b"PRIVATE KEY" not in raw:
        return
    end_at: int | None = None      # next "-----END " at or after the cursor; -1: none left
    for m in _PRIVATE_KEY.finditer(text):
        if end_at is None or -1 < end_at < m.end():
            end_at = text.find("-----END ", m.end())
        if end_at >= 0 and end_at - m.end() <= _KEY_MAX_CHARS:
            close = text.find("-----", end_at + 9, end_at + 80)
            yield m.start(), (close + 5 if close >= 0 else end_at + 9), "private-key"
        else:
            yield m.start(), _KEY_BODY.match(text, m.end()).end(), "private-key"


def _fold(text: str) -> str:
    """ASCII letters lowered, length kept, so spans in the folded text fit the input.

    Non-ASCII text goes through UTF-32 bytes: `bytes.lower` touches only bytes A-Z, which
    lowers every ASCII letter and maps other characters to other non-ASCII ones, which no
    folded pattern matches.
    """
    if text.isascii():
        return text.lower()
    return text.encode("utf-32-le", "surrogatepass").lower().decode("utf-32-le", "surrogatepass")


def _candidates(text: str) -> list[tuple[int, int, int, str]]:
    """Spans from every rule; anchors are looked for in UTF-8 bytes (fast for any text)."""
    folded = _fold(text)
    raw = {False: text.encode("utf-8", "surrogatepass"),
           True: folded.encode("utf-8", "surrogatepass")}
    found = [(s, e, -1, k) for s, e, k in _private_key_spans(text, raw[False])]
    for priority, rule in enumerate(_RULES):
        hay = folded if rule.fold else text
        found.extend((s, e, priority, k) for s, e, k in _rule_spans(rule, text, hay, raw[rule.fold])
                     if e > s)
    return found


def _merge(found: list[tuple[int, int, int, str]]) -> list[tuple[int, int, str]]:
    """Union overlapping spans; the earliest rule in the table names the union."""
    merged: list[list] = []
    for start, end, priority, kind in sorted(found):
        if merged and start < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], end)
            if priority < last[2]:
                last[2], last[3] = priority, kind
        else:
            merged.append([start, end, priority, kind])
    return [(s, e, k) for s, e, _, k in merged]


def _outside_markers(spans: list[tuple[int, int, str]], text: str) -> list[tuple[int, int, str]]:
    """Cut existing markers out of spans so they survive unchanged."""
    markers = [m.span() for m in MARKER.finditer(text)] if "<redacted:" in text else []
    pieces, i = [], 0
    for start, end, kind in spans:
        while i < len(markers) and markers[i][1] <= start:
            i += 1
        j, cursor = i, start
        while j < len(markers) and markers[j][0] < end:
            if markers[j][0] > cursor:
                pieces.append((cursor, markers[j][0], kind))
            cursor = max(cursor, markers[j][1])
            j += 1
        if cursor < end:
            pieces.append((cursor, end, kind))
    return pieces


def redact(text: str) -> Redacted:
    """Replace each secret in ``text`` with ``<redacted:KIND>``; count findings by kind."""
    spans = _outside_markers(_merge(_candidates(text)), text)
    out, cursor, counts = [], 0, Counter()
    for start, end, kind in spans:
        out.append(text[cursor:start])
        out.append(f"<redacted:{kind}>")
        counts[kind] += 1
        cursor = end
    out.append(text[cursor:])
    return Redacted("".join(out), tuple(sorted(counts.items())))
