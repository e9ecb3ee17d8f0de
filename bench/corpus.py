"""Benchmark corpora: the real data set's rows, and generated lessons for the scale vaults.

Generated lessons are NOT alike: each draws an ecosystem (tool, error vocabulary, path
and frame shapes), one of several failure kinds inside it, random names, versions,
numbers and paths, and a cause/fix phrasing from several templates. Every generated
lesson has its own evidence (a multi-line error paste), as real ones do.
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "corpus"))
import failure_corpus as project_corpus  # noqa: E402

DEFAULT_DATA = None   # the repo's own corpus, tests/corpus
FILES = project_corpus.SHARED_FILES


def shown(path: str | Path) -> str:
    """A path as results record it: relative to the repo, never one machine's layout."""
    return os.path.relpath(Path(path).resolve(), REPO)


def load(data: Path | None = DEFAULT_DATA) -> dict[str, list[dict]]:
    """The repo's corpus (None), or a directory in the shared development set's format
    (`cases.jsonl`, `reference.jsonl`, …); every row has its `split`, fixed by its id."""
    if data is None:
        return project_corpus.load()
    out = {}
    for name in FILES:
        path = Path(data) / f"{name}.jsonl"
        if not path.is_file():
            raise SystemExit(f"bench: {path} is missing (need {', '.join(FILES)})")
        out[name] = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        for row in out[name]:
            row.setdefault("split", project_corpus.split_of(row["id"]))
    return out


def data_name(data: Path | None) -> str:
    """How a result names its data: a path relative to the repo."""
    return "tests/corpus" if data is None else shown(data)


def real_lessons(rows: dict[str, list[dict]]) -> list[dict]:
    """`mem import` lines for the real cases and distractors (lessons with evidence)."""
    return [{"id": r["id"], "text": r["memory"], "evidence": r["evidence"], "tool": r["tool"]}
            for r in rows["cases"] + rows["distractors"]]


WORDS = ("billing ledger orders cart auth session invoice report gateway search index "
         "media upload profile inventory payments catalog notify scheduler metrics audit "
         "export import sync worker tenant shipping pricing quota webhook cache").split()
USERS = ("ana", "dev", "runner", "ci", "build", "mkumar", "jli", "ops", "sam", "travis")


def _name(rng: random.Random, sep: str = "-") -> str:
    return sep.join(rng.sample(WORDS, rng.randint(1, 2)))


def _version(rng: random.Random) -> str:
    return f"{rng.randint(0, 14)}.{rng.randint(0, 30)}.{rng.randint(0, 20)}"


def _root(rng: random.Random) -> str:
    return rng.choice([f"/home/{rng.choice(USERS)}/src/{_name(rng)}",
                       f"/builds/{_name(rng)}/{_name(rng)}", f"/app",
                       f"C:\\Users\\{rng.choice(USERS)}\\code\\{_name(rng)}",
                       f"/Users/{rng.choice(USERS)}/work/{_name(rng)}",
                       f"/var/lib/jenkins/workspace/{_name(rng, '_')}"])


def _python(rng):
    mod, root = _name(rng, "_"), _root(rng)
    frames = "".join(f'  File "{root}/{_name(rng, "_")}/{_name(rng, "_")}.py", line '
                     f'{rng.randint(3, 900)}, in {_name(rng, "_")}\n    {_name(rng, "_")}()\n'
                     for _ in range(rng.randint(1, 4)))
    kind = rng.choice([
        (f"ModuleNotFoundError: No module named '{mod}'", "a module missing from the environment",
         f"install {mod} into the interpreter the job actually runs"),
        (f"KeyError: '{_name(rng, '_')}'", "a config key that only exists in one environment",
         "read the setting with a default and document it"),
        (f"TypeError: {_name(rng, '_')}() got an unexpected keyword argument '{_name(rng, '_')}'",
         f"the library's {_version(rng)} release renamed a parameter",
         "pin the library or update the call site to the new name"),
        (f"sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server "
         f"at \"db-{rng.randint(1, 9)}\" port {rng.choice([5432, 5433, 6432])} failed: timeout expired",
         "the pool outlived the database's idle timeout", "enable pool_pre_ping and recycle connections"),
        (f"RecursionError: maximum recursion depth exceeded while calling a Python object",
         "two properties that call each other through __getattr__",
         "store the value under a private name instead of re-entering the accessor"),
    ])
    return "python", f"Traceback (most recent call last):\n{frames}{kind[0]}", kind[1:]


def _node(rng):
    pkg, root = _name(rng), _root(rng)
    frames = "".join(f"    at {_name(rng, '')} ({root}/node_modules/{_name(rng)}/lib/"
                     f"{_name(rng)}.js:{rng.randint(1, 700)}:{rng.randint(1, 80)})\n"
                     for _ in range(rng.randint(2, 5)))
    kind = rng.choice([
        (f"Error: Cannot find module '@{_name(rng)}/{pkg}'\nRequire stack:\n- {root}/index.js",
         "the package was hoisted differently by the new lockfile", "declare it as a direct dependency"),
        (f"TypeError: Cannot read properties of undefined (reading '{_name(rng, '')}')",
         "an API response that is sometimes empty", "guard the optional field before mapping it"),
        (f"npm ERR! code ETARGET\nnpm ERR! notarget No matching version found for {pkg}@^{_version(rng)}.",
         "the registry mirror lags behind the public one", "point the scope at the public registry or wait for sync"),
        (f"Error: listen EADDRINUSE: address already in use :::{rng.randint(3000, 9999)}",
         "a previous dev server kept running in the background", "stop the stale process or pick a free port"),
        (f"FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
         "the bundler keeps every source map in memory", "raise --max-old-space-size or split the build"),
    ])
    return "node", f"{kind[0]}\n{frames}", kind[1:]


def _go(rng):
    root = _root(rng)
    kind = rng.choice([
        (f"panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: "
         f"segmentation violation code=0x1 addr=0x{rng.randint(16, 255):x} pc=0x{rng.randint(1 << 20, 1 << 24):x}]",
         "a client built before its config was loaded", "construct the client after reading config"),
        (f"go: {_name(rng)}.example.com/{_name(rng)}@v{_version(rng)}: reading "
         f"https://proxy.golang.org/...: 410 Gone",
         "a private module fetched through the public proxy", "set GOPRIVATE for the company domain"),
        (f"fatal error: concurrent map writes", "handlers sharing one map without a lock",
         "guard the map with a sync.Mutex or use sync.Map"),
    ])
    frames = "".join(f"\n{_name(rng, '')}.{_name(rng, '')}()\n\t{root}/{_name(rng)}.go:{rng.randint(5, 400)} +0x{rng.randint(16, 999):x}"
                     for _ in range(rng.randint(1, 3)))
    return "go", f"{kind[0]}\n\ngoroutine {rng.randint(1, 300)} [running]:{frames}", kind[1:]


def _rust(rng):
    crate = _name(rng, "_")
    kind = rng.choice([
        (f"error[E0502]: cannot borrow `{crate}` as mutable because it is also borrowed as immutable",
         "an iterator over the vector still alive while pushing", "collect the keys first, then mutate"),
        (f"error: failed to run custom build command for `openssl-sys v0.9.{rng.randint(50, 99)}`",
         "the image lacks the system OpenSSL headers", "install libssl-dev and pkg-config in the build stage"),
        (f"error[E0433]: failed to resolve: use of undeclared crate or module `{crate}`",
         "the feature flag that exposes the module was off", "enable the crate feature in Cargo.toml"),
    ])
    return "cargo", (f"   Compiling {crate} v{_version(rng)} ({_root(rng)})\n{kind[0]}\n  --> "
                     f"src/{crate}.rs:{rng.randint(1, 500)}:{rng.randint(1, 60)}"), kind[1:]


def _java(rng):
    cls = "".join(w.title() for w in rng.sample(WORDS, 2))
    frames = "".join(f"\tat com.{_name(rng, '.')}.{cls}.{_name(rng, '')}({cls}.java:{rng.randint(10, 999)})\n"
                     for _ in range(rng.randint(2, 5)))
    kind = rng.choice([
        (f"java.lang.OutOfMemoryError: Java heap space", "a report that loads every row before paging",
         "stream the result set instead of collecting it"),
        (f"java.lang.NoSuchMethodError: 'void com.{_name(rng, '.')}.{cls}.<init>(java.lang.String)'",
         "two versions of one library on the classpath", "exclude the transitive copy in the build file"),
        (f"[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:{_version(rng)}:test",
         "tests depend on the order the JVM lists files", "make each test set up its own fixtures"),
        (f"Could not resolve all files for configuration ':app:{_name(rng, '')}CompileClasspath'.",
         "the Gradle cache held a half-downloaded artifact", "refresh dependencies once and rebuild"),
    ])
    return "java", f"Exception in thread \"main\" {kind[0]}\n{frames}", kind[1:]


def _docker(rng):
    img = f"{_name(rng)}:{_version(rng)}"
    kind = rng.choice([
        (f"ERROR: failed to solve: {img}: not found", "a tag that was deleted from the registry",
         "pin the image by digest"),
        (f"Error response from daemon: driver failed programming external connectivity: Bind for "
         f"0.0.0.0:{rng.randint(1000, 9999)} failed: port is already allocated",
         "another compose project publishes the same port", "change the published port per project"),
        (f"exec /usr/local/bin/docker-entrypoint.sh: exec format error",
         "an arm64 image pulled onto an amd64 host", "build with --platform for the target architecture"),
        (f"failed to compute cache key: \"/{_name(rng)}/package.json\" not found: not found",
         "the file is excluded by .dockerignore", "remove the pattern that hides it from the context"),
    ])
    return "docker", f"#{rng.randint(3, 19)} [{rng.randint(1, 9)}/{rng.randint(9, 14)}] RUN step\n{kind[0]}", kind[1:]


def _k8s(rng):
    pod = f"{_name(rng)}-{rng.randint(10 ** 8, 10 ** 9):x}-{rng.randint(10 ** 4, 10 ** 5):x}"
    kind = rng.choice([
        (f"Back-off restarting failed container {_name(rng)} in pod {pod}",
         "the liveness probe fires before migrations finish", "add a startup probe with a longer window"),
        (f"0/{rng.randint(3, 12)} nodes are available: {rng.randint(1, 5)} Insufficient memory.",
         "requests sized for production on a small staging pool", "lower the requests in the staging values file"),
        (f"Failed to pull image \"registry.{_name(rng)}.io/{_name(rng)}:{_version(rng)}\": rpc error: "
         f"code = Unknown desc = unauthorized", "the pull secret lives in another namespace",
         "create the image pull secret in the workload's namespace"),
    ])
    return "kubernetes", f"Warning  {rng.choice(['BackOff', 'FailedScheduling', 'Failed'])}  {rng.randint(1, 59)}m  kubelet  {kind[0]}", kind[1:]


def _terraform(rng):
    res = f"aws_{rng.choice(['s3_bucket', 'iam_role', 'instance', 'lambda_function'])}.{_name(rng, '_')}"
    kind = rng.choice([
        (f"Error: Error acquiring the state lock\n\nLock Info:\n  ID:        {rng.getrandbits(64):x}",
         "a cancelled pipeline left the lock behind", "force-unlock after checking no apply is running"),
        (f"Error: creating {res}: BucketAlreadyExists", "bucket names are global across accounts",
         "add the account id to the bucket name"),
        (f"Error: Provider produced inconsistent final plan\n\nWhen expanding the plan for {res}",
         "a provider bug with computed tags", "upgrade the provider to the fixed release"),
    ])
    return "terraform", f"╷\n│ {kind[0]}\n│ \n│   with {res},\n│   on main.tf line {rng.randint(1, 300)}\n╵", kind[1:]


def _db(rng):
    table = _name(rng, "_")
    kind = rng.choice([
        (f"ERROR:  deadlock detected\nDETAIL:  Process {rng.randint(1000, 99999)} waits for ShareLock on "
         f"transaction {rng.randint(10 ** 5, 10 ** 7)}", "two jobs update the same rows in opposite order",
         "update rows in primary-key order in both jobs"),
        (f"FATAL:  remaining connection slots are reserved for non-replication superuser connections",
         "each worker opens its own pool", "put a connection pooler in front of the database"),
        (f"ERROR:  duplicate key value violates unique constraint \"{table}_pkey\"",
         "the sequence fell behind after a bulk load", "reset the sequence to the table's max id"),
    ])
    return "postgres", f"{rng.choice(['2024', '2025'])}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)} " \
                       f"{rng.randint(10, 23)}:{rng.randint(10, 59)}:{rng.randint(10, 59)} UTC [{rng.randint(100, 9999)}] {kind[0]}", kind[1:]


ECOSYSTEMS = (_python, _node, _go, _rust, _java, _docker, _k8s, _terraform, _db)
PHRASES = (
    "Cause: {cause}. Fix: {fix}.",
    "This happened because of {cause}; we fixed it by doing this: {fix}.",
    "Root cause was {cause}. The durable fix is to {fix}, not to retry.",
    "Seen in the {service} service after the {version} upgrade: {cause}. {Fix}.",
    "{Fix} — the failure comes from {cause}, which only shows up on {where}.",
    "We lost an afternoon to this: {cause}. Next time, {fix} and re-run the job.",
)

NOTES = (
    "It broke {n} builds before anyone noticed.",
    "Only the {name} pipeline was affected; {other} uses a different base image.",
    "Reverting to {version} hid it but did not fix it.",
    "The retry loop in {name} made it look flaky for {n} days.",
    "Local runs passed because the laptops had {other} installed globally.",
    "Alerting paged the {name} on-call {n} times that week.",
    "A rollback to the previous {other} tag confirmed the cause.",
    "Upstream tracks it in their issue tracker; {name} pinned {version} meanwhile.",
    "",
)


def generated_lessons(count: int, seed: int = 0) -> list[dict]:
    """`count` varied `mem import` lines, each with its own evidence."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        tool, evidence, (cause, fix) = rng.choice(ECOSYSTEMS)(rng)
        text = rng.choice(PHRASES).format(
            cause=cause, fix=fix, Fix=fix[0].upper() + fix[1:], service=_name(rng),
            version=_version(rng), where=rng.choice(["CI", "the ARM runners", "staging",
                                                      "fresh laptops", "the nightly job"]))
        text += " " + rng.choice(NOTES).format(
            n=rng.randint(2, 90), name=_name(rng), other=_name(rng), version=_version(rng))
        text += f" (ticket {rng.choice(['OPS', 'DEV', 'INC'])}-{rng.randint(100, 99999)}, {_name(rng)})"
        out.append({"id": f"gen-{seed}-{n}", "text": text, "evidence": evidence, "tool": tool})
    return out


def write_jsonl(rows: list[dict], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path
