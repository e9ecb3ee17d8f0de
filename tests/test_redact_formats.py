"""Credential formats with values drawn fresh on every run (issue 19): 60+ formats from
the published token layouts (gitleaks' and GitHub secret scanning's lists), each inside
the text it is usually seen in. None may survive redaction, alone or through ingest,
remember, import and context; look-alikes (digests, shas, integrity fields) must."""
from __future__ import annotations

import json
import random
import secrets
import string
import subprocess
import sys
from pathlib import Path

import pytest

from poimen.engine import Engine
from poimen.redact import redact

MEM = str(Path(sys.executable).with_name("mem"))
_rng = random.SystemRandom()
B62 = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits


def r(n: int, alphabet: str = B62) -> str:
    """Fresh random characters; base62 bodies get the digits and capitals real ones have."""
    while True:
        s = "".join(_rng.choice(alphabet) for _ in range(n))
        if alphabet != B62 or (sum(c.isdigit() for c in s) >= 2 and sum(c.isupper() for c in s) >= 2):
            return s


def h(n: int) -> str:
    return r(n, "0123456789abcdef")


def b64(n: int) -> str:
    return r(n, B62 + "+/")


def fmt(name: str, make):
    return pytest.param(make, id=name)


# each maker returns (text, secret)
FORMATS = [
    fmt("aws-id", lambda s=("AKIA" + r(16, string.ascii_uppercase + "234567")): (f"AWS_ACCESS_KEY_ID={s}", s)),
    fmt("aws-secret", lambda s=b64(40): (f"aws_secret_access_key = {s}", s)),
    fmt("gcp-api-key", lambda s="AIza" + r(35, B62 + "-_"): (f"?key={s}&q=1", s)),
    fmt("gcp-oauth-secret", lambda s="GOCSPX-" + r(28, B62 + "-_"): (f'"client_secret": "{s}"', s)),
    fmt("gcp-access-token", lambda s="ya29." + r(120, B62 + "-_"): (f"token {s}", s)),
    fmt("github-ghp", lambda s="ghp_" + r(36): (f"GITHUB_TOKEN={s}", s)),
    fmt("github-ghs", lambda s="ghs_" + r(36): (f"remote: https://x-access-token:{s}@github.com", s)),
    fmt("github-pat", lambda s=f"github_pat_{r(22)}_{r(59)}": (f"export GH_TOKEN={s}", s)),
    fmt("gitlab-pat", lambda s="glpat-" + r(20, B62 + "-_"): (f"PRIVATE-TOKEN: {s}", s)),
    fmt("gitlab-runner", lambda s="glrt-" + r(20, B62 + "-_"): (f"token = \"{s}\"", s)),
    fmt("slack-bot", lambda s=f"xoxb-{r(12, string.digits)}-{r(12, string.digits)}-{r(24)}": (f"SLACK={s}", s)),
    fmt("slack-app", lambda s=f"xapp-1-{r(11, UPPER_DIGITS)}-{r(13, string.digits)}-{h(64)}": (f"app token {s}", s)),
    fmt("slack-webhook", lambda s=f"T{r(8, UPPER_DIGITS)}/B{r(10, UPPER_DIGITS)}/{r(24)}": (f"POST https://hooks.slack.com/services/{s}", s)),
    fmt("stripe-live", lambda s="sk_live_" + r(24): (f"Stripe.api_key = '{s}'", s)),
    fmt("stripe-restricted", lambda s="rk_live_" + r(24): (f"STRIPE_KEY={s}", s)),
    fmt("stripe-webhook", lambda s="whsec_" + r(32): (f"endpoint secret {s}", s)),
    fmt("npm-token", lambda s="npm_" + r(36): (f"//registry.npmjs.org/:_authToken={s}", s)),
    fmt("pypi-token", lambda s="pypi-AgEIcHlwaS5vcmc" + r(70, B62 + "-_"): (f"password = {s}", s)),
    fmt("sendgrid", lambda s=f"SG.{r(22, B62 + '-_')}.{r(43, B62 + '-_')}": (f"sg = SendGridAPIClient('{s}')", s)),
    fmt("twilio-api-key", lambda s="SK" + h(32): (f"api key sid {s}", s)),
    fmt("twilio-auth-token", lambda s=h(32): (f"client = Client('AC{h(32)}', '{s}')", s)),
    fmt("anthropic", lambda s=f"sk-ant-api03-{r(93, B62 + '-_')}AA": (f"ANTHROPIC_API_KEY={s}", s)),
    fmt("openai", lambda s=f"sk-proj-{r(48)}": (f"openai.api_key = \"{s}\"", s)),
    fmt("huggingface", lambda s="hf_" + r(34): (f"huggingface-cli login --token {s}", s)),
    fmt("digitalocean", lambda s="dop_v1_" + h(64): (f"doctl auth init -t {s}", s)),
    fmt("heroku-new", lambda s="HRKU-" + r(60, B62 + "-_"): (f"HEROKU_API_KEY={s}", s)),
    fmt("shopify", lambda s="shpat_" + h(32): (f"X-Shopify-Access-Token: {s}", s)),
    fmt("vault-hvs", lambda s="hvs." + r(90, B62 + "_-"): (f"VAULT_TOKEN={s}", s)),
    fmt("vault-login-bare", lambda s="s." + r(24): (f"$ vault login {s}", s)),
    fmt("databricks", lambda s="dapi" + h(32): (f"DATABRICKS_TOKEN={s}", s)),
    fmt("age", lambda s="AGE-SECRET-KEY-1" + r(58, UPPER_DIGITS): (f"# key\n{s}", s)),
    fmt("postman", lambda s=f"PMAK-{h(24)}-{h(34)}": (f"x-api-key: {s}", s)),
    fmt("newrelic", lambda s="NRAK-" + r(27, UPPER_DIGITS): (f"NEW_RELIC_API_KEY={s}", s)),
    fmt("linear", lambda s="lin_api_" + r(40): (f"LINEAR={s}", s)),
    fmt("atlassian", lambda s="ATATT3" + r(180, B62 + "_-="): (f"jira token {s}", s)),
    fmt("square", lambda s="sq0atp-" + r(22, B62 + "-_"): (f"square {s}", s)),
    fmt("telegram", lambda s="AA" + r(33, B62 + "_-"): (f"https://api.telegram.org/bot{r(10, string.digits)}:{s}/getMe", s)),
    fmt("discord-webhook", lambda s=r(68, B62 + "_-"): (f"https://discord.com/api/webhooks/{r(18, string.digits)}/{s}", s)),
    fmt("jwt", lambda s=f"eyJhbGciOiJIUzI1NiJ9.eyJ{r(40, B62 + '-_')}.{r(43, B62 + '-_')}": (f"Cookie: session={s}", s)),
    fmt("azure-conn", lambda s=b64(86) + "==": (f"DefaultEndpointsProtocol=https;AccountName=x;AccountKey={s};EndpointSuffix=core.windows.net", s)),
    fmt("azure-keys-list", lambda s=b64(86) + "==": (f'[\n  {{\n    "keyName": "key1",\n    "permissions": "FULL",\n    "value": "{s}"\n  }}\n]', s)),
    fmt("azure-sas", lambda s=b64(43) + "%3D": (f"https://a.blob.core.windows.net/c?sv=2022&sig={s}", s)),
    fmt("docker-auth", lambda s=b64(40) + "==": (f'{{"auths": {{"ghcr.io": {{"auth": "{s}"}}}}}}', s)),
    fmt("url-password", lambda s=r(16): (f"postgres://app:{s}@db:5432/app", s)),
    fmt("password-env", lambda s=r(14, B62 + "!#%"): (f"DB_PASSWORD={s}", s)),
    fmt("password-json", lambda s=r(14): (f'{{"password": "{s}"}}', s)),
    fmt("secret-yaml", lambda s=r(30): (f"client_secret: {s}", s)),
    fmt("api-key-header", lambda s=r(32): (f"x-api-key: {s}", s)),
    fmt("authorization-bearer", lambda s=r(40, B62 + "._-"): (f"Authorization: Bearer {s}", s)),
    fmt("authorization-basic", lambda s=b64(28) + "==": (f"authorization: Basic {s}", s)),
    fmt("set-cookie", lambda s=r(32): (f"Set-Cookie: sid={s}; HttpOnly", s)),
    fmt("curl-user", lambda s=r(12): (f"curl -u deploy:{s} https://x", s)),
    fmt("mysql-p", lambda s=r(12): (f"mysql -uroot -p{s} app", s)),
    fmt("docker-login-p", lambda s=r(20): (f"docker login -u me -p {s} ghcr.io", s)),
    fmt("sshpass", lambda s=r(14): (f"sshpass -p '{s}' ssh deploy@10.0.0.7", s)),
    fmt("cli-token-flag", lambda s=r(32): (f"gh auth login --token {s}", s)),
    fmt("mailgun-auth-tuple", lambda s="key-" + h(32): (f"requests.post(url, auth=('api', '{s}'))", s)),
    fmt("requests-auth-tuple", lambda s=r(18): (f"session.get(url, auth=('admin', '{s}'))", s)),
    fmt("datadog-app-key-header", lambda s=h(40): (f"DD-APPLICATION-KEY: {s}", s)),
    fmt("datadog-app-key-env", lambda s=h(40): (f"DD_APP_KEY={s}", s)),
    fmt("datadog-api-key-env", lambda s=h(32): (f"DD_API_KEY={s}", s)),
    fmt("hex-token-after-name", lambda s=h(64): (f"CIRCLE_TOKEN: {s}", s)),
    fmt("doppler", lambda s="dp.st." + r(43): (f"DOPPLER_TOKEN={s}", s)),
    fmt("pulumi", lambda s="pul-" + h(40): (f"PULUMI_ACCESS_TOKEN={s}", s)),
    fmt("grafana-sa", lambda s=f"glsa_{r(32)}_{h(8)}": (f"grafana {s}", s)),
    fmt("sentry", lambda s="sntrys_" + r(80): (f"SENTRY_AUTH_TOKEN={s}", s)),
    fmt("flyio", lambda s="fo1_" + r(43, B62 + "_-"): (f"fly {s}", s)),
    fmt("planetscale", lambda s="pscale_tkn_" + r(43): (f"PLANETSCALE={s}", s)),
    fmt("rubygems", lambda s="rubygems_" + h(48): (f":rubygems_api_key: {s}", s)),
    fmt("clojars", lambda s="CLOJARS_" + r(60, string.ascii_lowercase + string.digits): (f"deploy {s}", s)),
    fmt("dynatrace", lambda s=f"dt0c01.{r(24, UPPER_DIGITS)}.{r(64, UPPER_DIGITS)}": (f"Api-Token {s}", s)),
    fmt("prefect", lambda s="pnu_" + r(36): (f"PREFECT_API_KEY={s}", s)),
    fmt("readme", lambda s="rdme_" + r(70, string.ascii_lowercase + string.digits): (f"readme {s}", s)),
    fmt("hf-org", lambda s="api_org_" + r(34): (f"hf org {s}", s)),
    fmt("mapbox-secret", lambda s=f"sk.eyJ{r(60, B62 + '-_')}.{r(22, B62 + '-_')}": (f"MAPBOX={s}", s)),
    fmt("shippo", lambda s="shippo_live_" + h(40): (f"shippo {s}", s)),
    fmt("airtable-pat", lambda s=f"pat{r(14)}.{h(64)}": (f"AIRTABLE={s}", s)),
    fmt("alibaba-id", lambda s="LTAI" + r(20): (f"access_key_id: {s}", s)),
    fmt("artifactory", lambda s="AKCp" + r(69): (f"X-JFrog-Art-Api: {s}", s)),
    fmt("bedrock", lambda s="ABSK" + b64(140) + "=": (f"AWS_BEARER_TOKEN_BEDROCK={s}", s)),
    fmt("terraform", lambda s=f"{r(14)}.atlasv1.{r(66, B62 + '-_')}": (f'token = "{s}"', s)),
    fmt("mailchimp", lambda s=f"{h(32)}-us{_rng.randint(1, 21)}": (f"mailchimp key {s}", s)),
    fmt("teams-webhook", lambda s=f"{h(8)}-{h(4)}-{h(4)}-{h(4)}-{h(12)}@{h(8)}-{h(4)}-{h(4)}-{h(4)}-{h(12)}/IncomingWebhook/{h(32)}/{h(8)}-{h(4)}-{h(4)}-{h(4)}-{h(12)}": (f"POST https://acme.webhook.office.com/webhookb2/{s}", s)),
    fmt("notion", lambda s=f"ntn_{r(11, string.digits)}{r(35)}": (f"NOTION_TOKEN={s}", s)),
    fmt("octopus", lambda s="API-" + r(26, UPPER_DIGITS): (f"X-Octopus-ApiKey: {s}", s)),
    fmt("openshift", lambda s="sha256~" + r(43, B62 + "_-"): (f"oc login --token={s}", s)),
    fmt("perplexity", lambda s="pplx-" + r(48): (f"PPLX={s}", s)),
    fmt("sendinblue", lambda s=f"xkeysib-{h(64)}-{r(16)}": (f"api-key: {s}", s)),
    fmt("sourcegraph", lambda s=f"sgp_{h(16)}_{h(40)}": (f"SRC_ACCESS_TOKEN={s}", s)),
    fmt("duffel", lambda s="duffel_live_" + r(43): (f"duffel {s}", s)),
    fmt("1password", lambda s="ops_eyJ" + b64(300): (f"OP_SERVICE_ACCOUNT_TOKEN={s}", s)),
    fmt("infracost", lambda s="ico-" + r(32): (f"INFRACOST_API_KEY={s}", s)),
    fmt("harness", lambda s=f"pat.{r(22)}.{r(24)}.{r(20)}": (f"x-api-key {s}", s)),
    fmt("private-key", lambda s="\n".join(b64(64) for _ in range(5)): (f"-----BEGIN RSA PRIVATE KEY-----\n{s}\n-----END RSA PRIVATE KEY-----", s)),
]

LOOKALIKES = [
    lambda: f"commit {h(40)}", lambda: f"Merge: {h(7)} {h(7)}", lambda: f"sha256:{h(64)}",
    lambda: f'"integrity": "sha512-{b64(86)}=="', lambda: f"digest: sha256:{h(64)} size: 1234",
    lambda: f"request id {h(8)}-{h(4)}-{h(4)}-{h(4)}-{h(12)}", lambda: f"git checkout {h(40)}",
    lambda: f'"resolved": "https://registry.npmjs.org/a/-/a-1.0.{_rng.randint(0, 9)}.tgz"',
    lambda: "vault login -method=github", lambda: f"docker run -p {_rng.randint(1000, 9999)}:80 img",
    lambda: f"ETag: \"{h(32)}\"", lambda: f"object {h(40)} is missing",
]


def _secret_parts(secret: str) -> list[str]:
    return [line for line in secret.splitlines() if len(line) >= 8] or [secret]


@pytest.mark.parametrize("make", FORMATS)
def test_a_fresh_value_of_each_format_is_redacted(make):
    text, secret = make()
    out = redact(f"line before\n{text}\nline after").text
    for part in _secret_parts(secret):
        assert part not in out, (text, out)
    assert redact(out).text == out


def test_there_are_at_least_60_formats():
    assert len(FORMATS) >= 60


@pytest.mark.parametrize("make", LOOKALIKES)
def test_lookalikes_are_kept(make):
    for _ in range(20):
        text = make()
        assert redact(text).text == text


def test_no_format_reaches_the_vault_through_any_path(tmp_path):
    """Fresh values of every format through ingest, remember, import and context: none
    in any byte of the vault, nor in an answer."""
    planted = [p.values[0]() for p in FORMATS]
    vault = tmp_path / "vault"
    engine = Engine(vault, project="p")
    answers = []
    for i, (text, _) in enumerate(planted):
        log = f"Error: deploy step {i} failed\n{text}\nError: exit status 1"
        evidence = engine.ingest(log, source="ci").evidence_sha
        engine.remember("L1", f"deploy step {i} failed because of this config:\n{text}",
                        parents=[evidence])
        answers.append(engine.context({"signature_source": log, "task": text}))
        answers.append(engine.search(text, limit=3))
    lines = "\n".join(json.dumps({"text": f"imported lesson {i} quoting {t}", "evidence": t})
                      for i, (t, _) in enumerate(planted))
    done = subprocess.run([MEM, "--vault", str(vault), "--json", "import", "-"], input=lines,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    vault_bytes = b"".join(p.read_bytes() for p in vault.rglob("*") if p.is_file())
    answer_text = json.dumps(answers) + done.stdout
    for text, secret in planted:
        for part in _secret_parts(secret):
            assert part.encode() not in vault_bytes, text
            assert part not in answer_text, text
