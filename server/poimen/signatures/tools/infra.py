"""Docker (daemon, runtime exec, BuildKit, compose), Kubernetes/kubectl, Helm, Terraform,
GitHub Actions steps."""

from __future__ import annotations

import re

from ..rules import Ctx, Hit, block, line

_NAMED = re.compile(r"\b([A-Za-z][\w.]{0,60}) \"[^\"]{1,253}\"(?= (?:not found|already exists|exists|"
                    r"is invalid|in namespace))")
_NAMESPACE = re.compile(r"\b(in (?:the )?namespace) \"[^\"]{1,253}\"")
_FIELDS = re.compile(r"\b(namespace|name): [\w.-]{1,253}")


def k8s_names(text: str) -> str:
    """`pods "web-7d9" not found` → `pods "<name>" not found`: object names are instances."""
    text = _NAMESPACE.sub(r'\1 "<ns>"', _NAMED.sub(r'\1 "<name>"', text))
    return _FIELDS.sub(lambda m: f"{m.group(1)}: <{'ns' if m.group(1) == 'namespace' else 'name'}>",
                       text)


def _k8s_named(tool: str, kind: str = ""):
    def build(ctx: Ctx, i: int, m: re.Match):
        return Hit(tool, m["kind"] if "kind" in m.re.groupindex and m["kind"] else kind,
                   k8s_names(m["msg"]), (), i, i)
    return build


_FORBIDDEN = re.compile(
    r"(?P<res>[\w.-]{1,100}) is forbidden: User \\?\"(?P<user>[^\"\\]{1,300})\\?\" cannot "
    r"(?P<verb>[\w-]{1,40}) (?:resource \\?\"(?P<res2>[^\"\\]{1,100})\\?\"|(?P<res3>[\w.-]{1,100}))")


def _forbidden(ctx: Ctx, i: int, m: re.Match):
    """RBAC denials in both wordings (<1.11 'cannot list pods at the cluster scope', later
    'cannot list resource "pods" in API group "" in the namespace "x"'): scope and namespace
    are dropped, the service account's name is kept (`default` is the usual mistake)."""
    user = re.sub(r"^system:serviceaccount:[^:]+:", "system:serviceaccount:<ns>:", m["user"])
    resource = m["res2"] or m["res3"]
    return Hit("kubernetes", "Forbidden", f"{m['res']} is forbidden: User {user} cannot "
               f"{m['verb']} {resource}", (), i, i)


def _exec(ctx: Ctx, i: int, m: re.Match):
    """Container entrypoint exec failures, old runc (`standard_init_linux.go:228: exec user
    process caused "…"`) and new (`exec /entrypoint.sh: …`) wording folded together; the
    entrypoint path is the instance, the errno text is the failure."""
    return Hit("docker", "exec-failed", f"exec user process: {m['errno'] or m['errno2']}", (), i, i)


def _exec_not_found(ctx: Ctx, i: int, m: re.Match):
    """The OCI runtime's wording changed across runc releases; the missing command did not."""
    return Hit("docker", "executable-not-found",
               f'exec: "{m["name"]}": executable file not found in $PATH', (), i, i)


def _gha_setup_version(ctx: Ctx, i: int, m: re.Match):
    """actions/setup-* wordings across releases, folded: version and arch are the identity."""
    version = m["v"] or m["v2"]
    arch = m["a"] or m["a2"]
    return Hit("github-actions", "setup-version-not-found",
               f"version {version} with arch {arch} not found", (), i, i)


# the AWS SDK for Go (v1) prints `Code: message`, then `status code: N, request id: …` on
# the next line; Terraform's and Packer's older providers pass that through behind their
# own prefix (`==> amazon-ebs.x: `, `Build 'x' errored after …: `)
_AWS_CODE = re.compile(r"(?:^|(?<=[\s:>]))(?P<kind>[A-Z][A-Za-z0-9]{2,60}(?:\.[A-Z][A-Za-z0-9]{1,60})?)"
                       r": (?=\S)")


def _aws_sdk(ctx: Ctx, i: int, m: re.Match):
    for j in range(i - 1, max(-1, i - 3), -1):
        if ctx.lines[j].strip():
            codes = list(_AWS_CODE.finditer(ctx.lines[j]))   # the code nearest the message
            if not codes:
                return None
            return Hit("aws", codes[-1]["kind"], ctx.lines[j][codes[-1].end():].strip(), (), j, i)
    return None


RULES = [
    line("docker-daemon-down", "docker", "cannot connect to the docker daemon",
         r"(?P<msg>Cannot connect to the Docker daemon at \S+?)\.? Is the docker daemon running\?",
         "daemon-unreachable"),
    line("docker-socket-permission", "docker", "permission denied while trying to connect",
         r"(?P<msg>Got permission denied while trying to connect to the Docker daemon socket)",
         "socket-permission-denied"),
    block("docker-exec", "docker", "exec user process|exec format error|exec ",
          r"(?:standard_init_linux\.go:\d+: exec user process caused:? \"?(?P<errno>[^\"]+?)\"?$|"
          r"^exec \S+: (?P<errno2>exec format error|no such file or directory|permission denied)$)",
          _exec),
    line("buildkit-checksum", "docker", "failed to compute cache key",
         r"(?P<msg>failed to compute cache key: failed to calculate checksum of ref (?P<x_ref>\S+): "
         r"\"(?P<x_path>[^\"]+)\": not found)", "failed-to-solve"),
    line("buildkit-solve", "docker", "failed to solve",
         r"failed to solve(?: with frontend [\w.]+)?: (?!process \")(?P<msg>.+)$", "failed-to-solve"),
    line("docker-no-matching-manifest", "docker", "no matching manifest",
         r"(?P<msg>no matching manifest for (?P<platform>\S+) in the manifest list entries)",
         "no-matching-manifest"),
    block("docker-exec-not-found", "docker", "executable file not found",
          r"exec: \\?\"(?P<name>[^\"\\]{1,200})\\?\": executable file not found in \$PATH",
          _exec_not_found),
    line("compose-service", "docker", "error: for ",
         r"^ERROR: for (?P<x_service>\S+)\s+(?P<msg>.+)$", "compose", ),
    block("docker-daemon", "docker", "error response from daemon",
          r"Error response from daemon: (?P<msg>.+)$", _k8s_named("docker", "daemon")),
    block("k8s-forbidden", "kubernetes", "is forbidden", _FORBIDDEN.pattern, _forbidden),
    line("kubectl-refused", "kubectl", "the connection to the server",
         r"(?P<msg>The connection to the server \S+ was refused)", "connection-refused"),
    line("kubectl-unable-to-connect", "kubectl", "unable to connect to the server",
         r"(?P<msg>Unable to connect to the server: .+)$", "unable-to-connect"),
    block("kubectl-error-from-server", "kubectl", "error from server",
          r"Error from server(?: \((?P<kind>\w+)\))?: (?P<msg>.+)$", _k8s_named("kubectl", "error")),
    line("k8s-oomkilled", "kubernetes", "oomkilled", r"^\s*(?:Reason:\s+|Last State:.*)(?P<msg>OOMKilled)\b",
         "OOMKilled"),
    line("k8s-scheduling", "kubernetes", "nodes are available",
         r"\d+/\d+ nodes are available: (?P<msg>.+?)\.?$", "FailedScheduling"),
    line("k8s-image-pull", "kubernetes", "failed to pull image",
         r"Failed to pull image \"(?P<x_image>[^\"]+)\": (?P<msg>.+)$", "ErrImagePull"),
    line("k8s-probe", "kubernetes", "probe failed",
         r"(?P<msg>(?:Liveness|Readiness|Startup) probe failed: .+)$", "ProbeFailed"),
    block("helm-resource-exists", "helm", "rendered manifests contain a resource",
          r"(?P<msg>rendered manifests contain a resource that already exists.*)$",
          _k8s_named("helm", "resource-exists")),
    block("helm-failed", "helm", "installation failed|upgrade failed|cluster unreachable",
          r"^Error: (?P<kind>INSTALLATION FAILED|UPGRADE FAILED|Kubernetes cluster unreachable)"
          r":? ?(?P<msg>.*)$", _k8s_named("helm")),
    line("terraform-error", "terraform", "error: ", r"^\s*Error: (?P<msg>.+)$", "error",
         needs="terraform"),
    block("gha-setup-version", "github-actions", "not found",
          r"(?:Version (?P<v>[\w.]+) with arch (?P<a>\w+) not found|The version '(?P<v2>[^']+)' "
          r"with architecture '(?P<a2>[^']+)' was not found)", _gha_setup_version),
    line("ansible-error", "ansible", "error!", r"^ERROR! (?P<msg>.+?)(?: This often indicates.*)?$",
         "error"),
    line("aws-cli-error", "aws", "an error occurred (",
         r"An error occurred \((?P<kind>\w+)\) when calling the (?P<msg>\w+ operation(?:: .+)?)$"),
    block("aws-sdk-error", "aws", "status code: ",
          r"^[^\n]{0,120}?\bstatus code: \d{3}, request id: ", _aws_sdk),
    line("elasticsearch-error", "elasticsearch", "_exception",
         r"\"type\":\"(?P<kind>\w+_exception)\",\"reason\":\"(?P<msg>(?:[^\"\\]|\\.){1,500})\""),
    line("gha-unable-to-resolve-action", "github-actions", "unable to resolve action",
         r"(?P<msg>Unable to resolve action `[^`]+`, .+)$", "action-not-found"),
]
