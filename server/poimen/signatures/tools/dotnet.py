""".NET host and tooling: framework resolution, `dotnet` command lookup, ICU, Visual
Studio's Error List rows, Entity Framework Core design-time errors. (Compiler, NuGet and
MSBuild lines and .NET exceptions are read in jvm.py.)"""

from __future__ import annotations

import re

from ..rules import Ctx, Hit, block, line


def _command_not_found(ctx: Ctx, i: int, m: re.Match):
    """The headline is the same for every missing command; the `* You intended to execute a
    .NET program, but dotnet-X does not exist.` bullet below names which."""
    for j in range(i + 1, min(len(ctx.lines), i + 6)):
        named = re.search(r"but (?P<cmd>dotnet-[\w.-]+) does not exist", ctx.lines[j])
        if named:
            return Hit("dotnet", "command-not-found", f"{m['msg']}: {named['cmd']} does not exist",
                       (), i, j)
    return None


def _framework_missing(ctx: Ctx, i: int, m: re.Match):
    """Newer hosts add the architecture (`(x64)`); the version and arch are the instance."""
    return Hit("dotnet", "framework-not-found", f"The framework '{m['name']}' was not found",
               (), i, i)


RULES = [
    block("dotnet-framework-missing", "dotnet", "was not found",
          r"The framework '(?P<name>[\w.]+)', version '[^']+'(?: \(\w+\))? was not found",
          _framework_missing),
    block("dotnet-command-not-found", "dotnet", "specified command or file was not found",
          r"(?P<msg>Could not execute because the specified command or file was not found)",
          _command_not_found),
    line("dotnet-icu-missing", "dotnet", "valid icu package",
         r"(?P<msg>Couldn't find a valid ICU package installed on the system)", "icu-missing"),
    # Visual Studio's Error List copied as text: Severity<TAB>Code<TAB>Description<TAB>Project…
    line("dotnet-error-list", "dotnet", "error\t",
         r"^\s*Error\t(?P<kind>(?:CS|NU|MSB|NETSDK|BC|FS)\d{4})\t(?P<msg>[^\t]+)"),
    line("efcore-design-time", "entity-framework", "unable to create an object of type",
         r"(?P<msg>Unable to create an object of type '(?P<x_context>[^']{1,200})')",
         "design-time-context"),
    line("efcore-design-package", "entity-framework", "doesn't reference microsoft.entityframeworkcore",
         r"(?P<msg>Your startup project '(?P<x_project>[^']{1,200})' doesn't reference "
         r"Microsoft\.EntityFrameworkCore\.Design)", "design-package-missing"),
    line("efcore-model", "entity-framework", "requires a primary key|no database provider|"
         "dbcontext was found",
         r"(?P<msg>The entity type '(?P<x_entity>[^']{1,200})' requires a primary key to be defined|"
         r"No database provider has been configured for this DbContext|"
         r"More than one DbContext was found|No DbContext was found)", "model"),
]
