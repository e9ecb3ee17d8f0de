import time, sys, random, string
from poimen.redact import redact, _RULES
random.seed(3)
rnd = "".join(random.choices(string.ascii_letters + string.digits + "+/=_-.:@ ", k=1_000_000))
hostile = {
 "random": lambda n: (rnd * (n // len(rnd) + 1))[:n],
 "eyJ": lambda n: ("eyJ" * n)[:n],
 "eyJ.": lambda n: ("eyJabcde." * n)[:n],
 "password=": lambda n: ("password=" * n)[:n],
 "token: ": lambda n: ("token: " * n)[:n],
 "://a:": lambda n: ("://a:b" * n)[:n],
 "curl -u": lambda n: ("curl -u a:b " * n)[:n],
 "mysql -p": lambda n: ("mysql -p" * n)[:n],
 "BEGIN": lambda n: ("-----BEGIN RSA PRIVATE KEY-----" * n)[:n],
 "BEGIN-END": lambda n: ("-----BEGIN PRIVATE KEY-----a-----END PRIVATE KEY-----" * n)[:n],
 "spaces": lambda n: (" " * n),
 "authorization": lambda n: ("Authorization: " * n)[:n],
 "bearer": lambda n: ("bearer " * n)[:n],
 "cookie": lambda n: ("cookie: a=" * n)[:n],
 "xox": lambda n: ("xoxb-" * n)[:n],
 "sk-": lambda n: ("sk-" * n)[:n],
 "ghp_": lambda n: ("ghp_" * n)[:n],
 "AKIA": lambda n: ("AKIA" * n)[:n],
 "-u": lambda n: ("curl " + " -u" * n)[:n],
 "heroku": lambda n: ("heroku_" * n)[:n],
 "secretaccesskey": lambda n: ("secret_access_key=" * n)[:n],
 "_auth": lambda n: ("_auth" * n)[:n],
 "newlines": lambda n: ("password=x\n" * n)[:n],
 "sig=": lambda n: ("?sig=" * n)[:n],
 "quote": lambda n: ('password="' * n)[:n],
}
small, big = 500_000, 4_000_000
for name, make in hostile.items():
    a, b = make(small), make(big)
    t = time.perf_counter(); redact(a); ta = time.perf_counter() - t
    t = time.perf_counter(); redact(b); tb = time.perf_counter() - t
    print(f"{name:16s} {ta:6.3f}s {tb:6.3f}s ratio {tb/ta:5.1f} (x{big//small} input)", flush=True)
