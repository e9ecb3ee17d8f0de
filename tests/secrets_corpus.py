"""Secrets planted in realistic logs, and look-alikes that redaction must keep verbatim.

Every secret is fake but has the real format (prefix, alphabet, length); bodies come from
a seeded generator so the corpus is the same on every run.
"""
from __future__ import annotations

import random
import string
from dataclasses import dataclass

_rng = random.Random(20261202)
_B62 = string.ascii_letters + string.digits


def _body(n: int, alphabet: str = _B62) -> str:
    while True:
        s = "".join(_rng.choice(alphabet) for _ in range(n))
        if alphabet != _B62 or (sum(c.isdigit() for c in s) >= 2 and sum(c.isupper() for c in s) >= 2):
            return s


def _hex(n: int) -> str:
    return _body(n, "0123456789abcdef")


@dataclass(frozen=True)
class Planted:
    kind: str                  # the marker kind expected in the redacted text
    secrets: tuple[str, ...]   # substrings that must not survive
    log: str                   # realistic text containing them


_AWS_ID = "AKIA" + _body(16, string.ascii_uppercase + "234567")
_AWS_SECRET = _body(40, _B62 + "/+")
_GH = {p: f"{p}_{_body(36)}" for p in ("ghp", "gho", "ghs", "ghu")}
_GH_PAT = f"github_pat_{_body(22)}_{_body(59)}"
_RSA_BODY = "\n".join(_body(64, _B62 + "+/") for _ in range(6))
_JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUiLCJpYXQ"
        "iOjE3MTYyMzkwMjJ9." + _body(43, _B62 + "-_"))
_AZURE_KEY = _body(86, _B62 + "+/") + "=="
_DOCKER_AUTH = "ZGVwbG95OnM5UXdlcnR5JTIxcGFzcw=="
_SLACK_HOOK = f"T{_body(8, string.ascii_uppercase + string.digits)}/B{_body(10, string.ascii_uppercase + string.digits)}/{_body(24)}"
_PYPI = "pypi-AgEIcHlwaS5vcmc" + _body(70, _B62 + "-_")
_OPENAI = f"sk-proj-{_body(48)}"
_ANTHROPIC = f"sk-ant-api03-{_body(93, _B62 + '-_')}AA"
_HEROKU = "2f4b8c1e-9d3a-4e7b-8f6c-1a2b3c4d5e6f"
_GCP_KEY = f"AIza{_body(35, _B62 + '-_')}"

PLANTED: tuple[Planted, ...] = (
    Planted("aws-access-key-id", (_AWS_ID,), f"""$ env | sort
AWS_ACCESS_KEY_ID={_AWS_ID}
AWS_DEFAULT_REGION=eu-west-1
HOME=/home/runner
"""),
    Planted("aws-secret-access-key", (_AWS_SECRET,), f"""$ cat ~/.aws/credentials
[default]
aws_access_key_id = {_AWS_ID}
aws_secret_access_key = {_AWS_SECRET}
"""),
    Planted("aws-secret-access-key", (_AWS_SECRET,), f"""$ aws sts assume-role --role-arn arn:aws:iam::123456789012:role/ci
{{
    "Credentials": {{
        "AccessKeyId": "{_AWS_ID}",
        "SecretAccessKey": "{_AWS_SECRET}",
        "Expiration": "2026-12-02T18:00:00Z"
    }}
}}
"""),
    Planted("private-key", (_RSA_BODY.split("\n")[2],), f"""Traceback (most recent call last):
  File "/app/deploy.py", line 41, in <module>
    creds = service_account.Credentials.from_service_account_info(info)
ValueError: Could not deserialize key data. The data was:
{{"type": "service_account", "project_id": "acme-ci", "private_key": "-----BEGIN PRIVATE KEY-----\\n{_RSA_BODY.replace(chr(10), chr(92) + 'n')}\\n-----END PRIVATE KEY-----\\n", "client_email": "ci@acme-ci.iam.gserviceaccount.com"}}
"""),
    Planted("gcp-api-key", (_GCP_KEY,), f"""google.api_core.exceptions.Forbidden: 403 GET https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key={_GCP_KEY}: API key not valid
"""),
    Planted("azure-storage-key", (_AZURE_KEY,), f"""azure.core.exceptions.ClientAuthenticationError: Server failed to authenticate the request.
Connection string: DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={_AZURE_KEY};EndpointSuffix=core.windows.net
"""),
    Planted("github-token", (_GH["ghp"],), f"""$ git push
remote: Invalid username or password.
fatal: Authentication failed for 'https://x-access-token:{_GH['ghp']}@github.com/acme/api.git/'
"""),
    Planted("github-token", (_GH["gho"], _GH["ghu"]), f"""::group::Run actions/checkout@v4
  token: {_GH['gho']}
  ssh-strict: true
  refresh: {_GH['ghu']}
::endgroup::
"""),
    Planted("github-token", (_GH["ghs"],), f"""> GET /repos/acme/api/actions/runs HTTP/2
> Host: api.github.com
> Authorization: token {_GH['ghs']}
< HTTP/2 401
"""),
    Planted("github-token", (_GH_PAT,), f"""export GH_TOKEN={_GH_PAT}
gh: Bad credentials (HTTP 401)
"""),
    Planted("gitlab-token", ("glpat-" + "Xk2" + "b9QmZ7rTnPq4Lw1Vy8s",), """$ glab auth login --token glpat-Xk2b9QmZ7rTnPq4Lw1Vy8s
ERROR: 401 Unauthorized
"""),
    Planted("slack-token", ("xoxb-" + "1234567890-2345678901-" + _body(24),), ""),
    Planted("slack-webhook", (_SLACK_HOOK,), f"""curl: (22) The requested URL returned error: 404
+ curl -fsS -X POST -d @payload.json https://hooks.slack.com/services/{_SLACK_HOOK}
"""),
    Planted("stripe-key", ("sk_live_51HZq8rT2vW9xY4bN6mK3jL1pQ7sD5fG0hJ",),
            """stripe.error.AuthenticationError: Invalid API Key provided: sk_live_51HZq8rT2vW9xY4bN6mK3jL1pQ7sD5fG0hJ
"""),
    Planted("stripe-key", ("rk_live_" + "51HxT4bR8mWq2Zp9Lk7Jn3Vc",), """STRIPE_RESTRICTED_KEY=rk_live_51HxT4bR8mWq2Zp9Lk7Jn3Vc node server.js
"""),
    Planted("npm-token", ("npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",), """$ cat .npmrc
//registry.npmjs.org/:_authToken=npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8
npm ERR! code E401
"""),
    Planted("npm-token", ("b7e0f1c2-3d4e-4f5a-8b9c-0d1e2f3a4b5c",), """//npm.pkg.github.com/:_authToken=b7e0f1c2-3d4e-4f5a-8b9c-0d1e2f3a4b5c
npm ERR! 403 Forbidden - GET https://npm.pkg.github.com/@acme%2fui
"""),
    Planted("pypi-token", (_PYPI,), f"""$ twine upload -u __token__ -p {_PYPI} dist/*
HTTPError: 403 Forbidden from https://upload.pypi.org/legacy/
"""),
    Planted("private-key", (_RSA_BODY.split("\n")[3],), f"""$ cat id_rsa
-----BEGIN RSA PRIVATE KEY-----
{_RSA_BODY}
-----END RSA PRIVATE KEY-----
Load key "id_rsa": invalid format
"""),
    Planted("private-key", (_RSA_BODY.split("\n")[1],), f"""-----BEGIN OPENSSH PRIVATE KEY-----
{_RSA_BODY}
-----END OPENSSH PRIVATE KEY-----
"""),
    Planted("private-key", (_RSA_BODY.split("\n")[4],), f"""-----BEGIN EC PRIVATE KEY-----
{_RSA_BODY}
-----END EC PRIVATE KEY-----
"""),
    Planted("private-key", (_RSA_BODY.split("\n")[5],), f"""gpg: importing secret key
-----BEGIN PGP PRIVATE KEY BLOCK-----

{_RSA_BODY}
=twTO
-----END PGP PRIVATE KEY BLOCK-----
"""),
    Planted("jwt", (_JWT.split(".")[2],), f"""requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://api.acme.dev/v1/jobs
request headers: {{'User-Agent': 'python-requests/2.32.3', 'X-Session': '{_JWT}'}}
"""),
    Planted("url-password", ("Pg_s3cr3t!2026",), """psycopg2.OperationalError: connection to server at "db.internal" (10.0.0.5), port 5432 failed
DATABASE_URL=postgres://app:Pg_s3cr3t!2026@db.internal:5432/app
"""),
    Planted("url-password", ("r3d1sPass",), """redis.exceptions.AuthenticationError: invalid password
  REDIS_URL: redis://:r3d1sPass@cache:6379/0
"""),
    Planted("password", ("hunter2-Prod",), """  File "/app/settings.py", line 12, in <module>
    DB = connect(host="db", user="app", password="hunter2-Prod")
"""),
    Planted("password", ("Tr0ub4dor&3",), """database:
  host: db.internal
  passwd: 'Tr0ub4dor&3'
  pool: 5
"""),
    Planted("password", ("s3cure pass phrase",), """{"user": "ci", "password": "s3cure pass phrase", "retries": 3}
"""),
    Planted("secret", ("9f8e7d6c5b4a",), """Error: missing scope
  CLIENT_SECRET=9f8e7d6c5b4a
"""),
    Planted("token", ("tok_4f9a2c7e1b3d5f8a",), """GET /hooks/deploy?token=tok_4f9a2c7e1b3d5f8a&ref=main 403
"""),
    Planted("api-key", ("Zx9Qw8Er7Ty6Ui5Op4As3Df2",), """x-api-key: Zx9Qw8Er7Ty6Ui5Op4As3Df2
HTTP/1.1 429 Too Many Requests
"""),
    Planted("api-key", ("mk2_Hq8sLp3Zr9",), """MAPBOX_API_KEY=mk2_Hq8sLp3Zr9 yarn build
"""),
    Planted("authorization", ("dXNlcjpwYXNzd29yZDEyMw==",), """* Connected to registry.internal (10.1.2.3) port 443
> GET /v2/_catalog HTTP/1.1
> Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==
< HTTP/1.1 401 Unauthorized
"""),
    Planted("authorization", ("c2VjcmV0LWJlYXJlci10b2tlbi0xMjM0NQ",), """curl -H 'Authorization: Bearer c2VjcmV0LWJlYXJlci10b2tlbi0xMjM0NQ' https://api.acme.dev
"""),
    Planted("twilio-api-key", ("SK" + "0123456789abcdef0123456789abcdef",), """twilio.base.exceptions.TwilioRestException: HTTP 401 error: Unable to create record: Authenticate
  api_key_sid=SK0123456789abcdef0123456789abcdef account=ACXXXXXXXX
"""),
    Planted("sendgrid-key", ("SG." + "ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr",),
            """python_http_client.exceptions.UnauthorizedError: HTTP Error 401
SENDGRID_API_KEY=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
"""),
    Planted("openai-key", (_OPENAI,), f"""openai.AuthenticationError: Error code: 401 - {{'error': {{'message': 'Incorrect API key provided: {_OPENAI}.'}}}}
"""),
    Planted("anthropic-key", (_ANTHROPIC,), f"""$ ANTHROPIC_API_KEY={_ANTHROPIC} python agent.py
anthropic.AuthenticationError: invalid x-api-key
"""),
    Planted("docker-auth", (_DOCKER_AUTH,), f"""$ cat ~/.docker/config.json
{{
	"auths": {{
		"ghcr.io": {{
			"auth": "{_DOCKER_AUTH}"
		}}
	}}
}}
"""),
    Planted("cli-password", ("d0ckerHubPw!",), """$ docker login -u acme -p d0ckerHubPw! docker.io
WARNING! Using --password via the CLI is insecure. Use --password-stdin.
Error response from daemon: Get "https://registry-1.docker.io/v2/": unauthorized: incorrect username or password
"""),
    Planted("heroku-api-key", (_HEROKU,), f"""remote: !    Invalid credentials provided.
HEROKU_API_KEY={_HEROKU}
"""),
    Planted("digitalocean-token", ("dop_v1_" + _hex(64),), ""),
    Planted("huggingface-token", ("hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567",), """huggingface_hub.errors.HfHubHTTPError: 401 Client Error
HF_TOKEN=hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567
"""),
    Planted("gcp-access-token", ("ya29." + _body(120, _B62 + "-_"),), ""),
    Planted("vault-token", ("hvs." + _body(90),), ""),
    Planted("basic-auth", ("n3xusPa55",), """+ curl -sf -u deploy:n3xusPa55 https://nexus.internal/repository/raw/
curl: (22) The requested URL returned error: 401
"""),
    Planted("cli-password", ("Myp4ss",), """$ mysql -h db -uroot -pMyp4ss app < dump.sql
ERROR 1045 (28000): Access denied for user 'root'@'10.0.0.7' (using password: YES)
"""),
    Planted("cookie", ("_gh_sess=" + "V2xqRk5Ua3lPVE16",), """< HTTP/2 302
< set-cookie: _gh_sess=V2xqRk5Ua3lPVE16; path=/; secure; HttpOnly
"""),
    Planted("telegram-bot-token", ("AAH" + _body(32, _B62 + "_-"),), ""),
)


def _fill_bare() -> tuple[Planted, ...]:
    """Formats planted without a hand-written log get a CI-output context."""
    out = []
    for p in PLANTED:
        if p.log:
            out.append(p)
            continue
        secret = p.secrets[0]
        value = f"123456789:{secret}" if p.kind == "telegram-bot-token" else secret
        out.append(Planted(p.kind, p.secrets, f"""##[group]Run ./scripts/release.sh
  env:
    RELEASE_CHANNEL: stable
+ ./notify --credential {value} --channel '#releases'
error: 401 Unauthorized (credential rejected)
##[endgroup]
Error: Process completed with exit code 1.
"""))
    return tuple(out)


PLANTED = _fill_bare()

# Text that looks like a secret but is not: each must come through redaction unchanged.
LOOKALIKES: tuple[str, ...] = (
    "commit 3f786850e387550fdab836ed7e6dc881de23001b\nAuthor: Jane <jane@example.com>\n",
    "HEAD is now at 9fceb02d0ae598e95dc970b74767f19372d61af8 Fix flaky test\n",
    "request_id=7c9e6679-7425-40de-944b-e07fc1f90ae7 status=500\n",
    "trace 550e8400-e29b-41d4-a716-446655440000 span 6ba7b810-9dad-11d1-80b4-00c04fd430c8\n",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n",
    "docker pull python@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n",
    '"integrity": "sha512-9Vi2zTjFJ3MZr2IekgZmqB+1lYbXOkGQk7I+2xRsmtjzwOKnrNc5Te3k4fVhA5vX9vYq+9RqqnZC9iCdG8qL0w==",\n',
    "Content-Type: application/octet-stream\nbody: SGVsbG8sIFdvcmxkISBUaGlzIGlzIGEgdGVzdCBwYXlsb2FkLg==\n",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==\n",
    "password=\nPASSWORD=\n",
    "password=<redacted>\npasswd: ***\nsecret=********\n",
    "DB_PASSWORD=${DB_PASSWORD}\napi_key: {{ .Values.apiKey }}\ntoken: null\n",
    "GITHUB_TOKEN: ***\nNPM_TOKEN=[MASKED]\n",
    "The token expired before the request finished; refresh the token and retry.\n",
    "SyntaxError: Unexpected token '<', \"<!DOCTYPE \"... is not valid JSON\n",
    "Uncaught SyntaxError: Unexpected token: punctuation\n",
    "usage: prompt_tokens=812 completion_tokens=64 max_tokens=1024\n",
    '{"token_type": "bearer", "expires_in": 3600}\n',
    "PWD=/home/runner/work/api/api\nOLDPWD=/home/runner\n",
    "FATAL:  password authentication failed for user \"postgres\"\n",
    "Enter passphrase for key '/home/dev/.ssh/id_ed25519':\n",
    "require_password: true\npassword_required=false\n",
    "tokenizer=bert-base-uncased\n",
    "lodash@4.17.21 react@18.3.1 numpy==1.26.4 django>=5.0,<5.1\n",
    "npm ERR! peer react@\"^18.0.0\" from @testing-library/react@14.1.2\n",
    "docker run -p 8080:80 -u 1000:1000 -e MODE=dev acme/api:1.4.2\n",
    "mkdir -p build/out && git push -u origin feature/login\n",
    "git@github.com:acme/api.git\nhttps://user@example.com/path\nhttp://[::1]:8080/health\n",
    "ssh-keygen -t ed25519 -f ~/.ssh/id_ed25519 -N ''\n",
    "secrets: inherit\nrun: echo ${{ secrets.DEPLOY_KEY }}\n",
    "sk-learn-compat==0.3 scikit-learn==1.5.1\n",
    "ModuleNotFoundError: No module named 'hf_transfer'\n",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n",
    "ETag: \"33a64df551425fcc55e4d42a148795d9f25f89d4\"\n",
    "Set-Cookie issue: browsers reject SameSite=None without Secure\n",
)
