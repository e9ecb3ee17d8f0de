"""One test per generic normalisation row: two pastes of one failure from two machines
share a key, and what tells two failures apart still does (synthetic lines, not corpus rows)."""

from __future__ import annotations

from poimen.signatures import extract
from poimen.signatures.normalise import normalise


def _sha(text: str) -> str:
    return extract(text)[0].sig_sha


def test_typographic_quotes_are_the_locale_not_the_failure():
    utf8 = "main.c:3:13: error: \u2018flag\u2019 undeclared (first use in this function)"
    c_locale = "src/main.c:9:2: error: 'flag' undeclared (first use in this function)"
    assert _sha(utf8) == _sha(c_locale)
    assert _sha(c_locale) != _sha("main.c:3:13: error: 'mode' undeclared (first use in this function)")
    assert normalise("\u201cx\u201d \u2018y\u2019") == "\"x\" 'y'"


def test_paste_framing_lines_are_not_read_into_a_message():
    plain = "ValueError: Malformed version string '~': invalid character(s)."
    for framing in ("```", "```text", "~~~", ">>> ", ">", "> >"):
        assert _sha(f"{plain}\n{framing}\n") == _sha(plain), framing
    assert _sha(f"{plain}\n```\n") != _sha("ValueError: Malformed version string '^': invalid character(s).")
    # a line that holds output after the fence is output, not framing
    assert _sha("ValueError: bad\nmore context") != _sha("ValueError: bad\n```")


def test_initial_capital_of_a_message_is_not_identity():
    assert _sha("fatal: The remote end hung up unexpectedly") == _sha(
        "fatal: the remote end hung up unexpectedly")
    assert _sha("fatal: the remote end hung up unexpectedly") != _sha(
        "fatal: the remote end closed the connection")
    assert normalise("TypeError here") == "TypeError here"
    assert normalise("SSL handshake failed") == "SSL handshake failed"
    assert normalise("Cannot find module") == "cannot find module"
    assert normalise("Runtime.ImportModuleError: x") == "Runtime.ImportModuleError: x"


def test_object_identity_hash_is_per_process():
    line = ("Exception in thread \"main\" java.lang.IllegalAccessError: class a.B (in unnamed "
            "module @0x{}) cannot access class sun.nio.ch.DirectBuffer (in module java.base)")
    assert _sha(line.format("4d0cbf3f")) == _sha(line.format("5a6d67c3"))
    assert _sha(line.format("4d0cbf3f")) != _sha(line.format("1b2c").replace("DirectBuffer", "Cleaner"))
    assert normalise("HRESULT 0x80131904") == "HRESULT 0x80131904"


def test_a_line_marked_up_as_inline_code_reads_as_its_output():
    plain = "AttributeError: 'OptionEngine' object has no attribute 'execute'"
    assert _sha(f"`{plain}`") == _sha(plain)
    assert extract(f"`{plain}`")[0].rule == extract(plain)[0].rule
    assert _sha(f"`{plain}`") != _sha("AttributeError: 'OptionEngine' object has no attribute 'connect'")
    # backticks inside a line are the tool's own quoting and stay
    assert "`" in extract("ld: error: undefined symbol: `foo' referenced")[0].excerpt


def test_a_version_that_ends_a_sentence_is_still_a_version():
    line = "PHP Fatal error:  Composer detected issues in your platform: requires a PHP version " \
           "\">= 8.1.0\". You are running {}."
    assert _sha(line.format("7.4.25")) == _sha(line.format("8.0.29"))
    assert normalise("You are running 7.4.25.") == "you are running <ver>."
    assert normalise("found glibc 2.31.0; need 2.34.1.") == "found glibc <ver>; need <ver>."
    assert normalise("needs Python 3.12.") == "needs Python 3.12."  # x.y alone names the language line


def test_python_import_origin_is_where_the_module_lives_not_the_failure():
    tb = "Traceback (most recent call last):\n  File \"app.py\", line 1, in <module>\n" \
         "ImportError: cannot import name 'escape' from 'jinja2'{}"
    new = tb.format(" (/home/a/venv/lib/python3.11/site-packages/jinja2/__init__.py)")
    assert _sha(new) == _sha(tb.format(""))
    assert _sha(new) == _sha(tb.format(" (C:\\Users\\b\\venv\\"))  # cut at the line's end
    assert _sha(new) != _sha(tb.format(" (x)").replace("'escape'", "'Markup'"))


def test_a_consequence_line_is_not_read_into_a_bare_exception():
    bare = "AttributeError: module 'collections' has no attribute 'MutableMapping'"
    assert _sha(f"{bare}\nmake: *** [Makefile:35: all] Error 1") == _sha(bare)
    assert _sha(f"{bare}\nProcess completed with exit code 2.") == _sha(bare)
    assert _sha(f"{bare}\nwhile loading the plugin") != _sha(bare)  # a real continuation stays


def test_a_blank_line_ends_a_bare_exception_message():
    bare = "AttributeError: 'OptionEngine' object has no attribute 'execute'"
    assert _sha(f"{bare}\n\n### Expected Behavior") == _sha(f"{bare}\n\nIt works on 1.4")
    assert _sha(f"{bare}\n\nIt works on 1.4") == _sha(bare)
    assert _sha(f"{bare}\nof the engine") != _sha(bare)  # a wrapped line still continues it


def test_pytest_error_line_at_any_source_indentation():
    shallow = "E   AttributeError: 'Function' object has no attribute 'get_marker'"
    deep = "E               AttributeError: 'Function' object has no attribute 'get_marker'"
    assert extract(deep) and not extract(deep)[0].loose
    assert _sha(deep) == _sha(shallow)
    assert _sha(deep) != _sha(deep.replace("get_marker", "iter_markers"))


def test_a_loggers_name_is_where_a_message_was_logged_not_what_failed():
    one = "INFO  [alembic.runtime.migration] Context impl.\nERROR [alembic.util.messaging] " \
          "Target database is not up to date."
    other = "ERROR [alembic.env] Target database is not up to date."
    assert extract(one) and not extract(one)[0].loose
    assert _sha(one) == _sha(other)
    assert _sha(other) != _sha("ERROR [alembic.env] Can't locate revision identified by 'abc'")


def test_a_one_word_qualifier_before_error_is_a_wrapper():
    line = "Javascript Error: IPython is not defined"
    text = f"That's when I get the following error message:\n{line}\nIt works elsewhere."
    keys = [s for s in extract(text) if not s.loose]
    assert [s.message for s in keys] == ["IPython is not defined"]
    assert keys[0].sig_sha == _sha(line)
    assert _sha(line) != _sha("Javascript Error: Jupyter is not defined")


def test_a_loggers_framing_on_every_line_of_a_traceback_is_not_output():
    plain = ["Traceback (most recent call last):", '  File "/srv/app/plugin.py", line 50, in <module>',
             "    class D(collections.MutableMapping):",
             "AttributeError: module 'collections' has no attribute 'MutableMapping'"]
    framed = "\n".join(f"2022-05-24 12:19:50.{720 + n} Error: Heater: {line}" for n, line in enumerate(plain))
    sig = extract(framed)[0]
    assert (sig.rule, sig.kind) == ("python-traceback", "AttributeError")
    assert sig.sig_sha == _sha("\n".join(plain))
    assert sig.sig_sha != _sha("\n".join(plain).replace("MutableMapping'", "Mapping'"))


def test_an_exception_kind_alone_takes_its_message_from_the_paragraph_below():
    below = "You're importing a component that needs useEffect. It only works in a Client Component."
    one = f"- error ./node_modules/@x/toast/index.mjs\nReactServerComponentsError:\n\n{below}\n"
    other = f"./components/Footer.tsx\nReactServerComponentsError:\n{below}\n\n   ,-[/a/b.mjs:1:1]"
    sig = [s for s in extract(one) if not s.loose][0]
    assert (sig.kind, sig.message) == ("ReactServerComponentsError", normalise(below))
    assert sig.sig_sha in {s.sig_sha for s in extract(other)}
    assert sig.sig_sha not in {s.sig_sha for s in extract(one.replace("useEffect", "useState"))}
    assert not [s for s in extract("SomeError:\n\n") if not s.loose]  # no message, no key


def test_a_build_tools_level_tag_on_a_relayed_childs_line_is_a_wrapper():
    child = 'error An unexpected error occurred: "https://registry.example/x.tgz: ESOCKETTIMEDOUT".'
    relayed = f"[INFO] yarn install v1.22.4\n[ERROR] {child}"
    assert extract(relayed)[0].family == extract(child)[0].family == "yarn:error"
    assert _sha(relayed) == _sha(child)
    # the build tool's own error lines keep their tag and their rule
    assert extract("[ERROR] Failed to read artifact descriptor for a:b:jar:1.0")[0].tool == "maven"


def test_an_argument_parsers_unknown_option_is_a_key_whatever_the_program():
    usage = "Usage:\n  pip install [options] <requirement specifier> ...\n\n"
    bare = extract(usage + "no such option: --install-option")
    assert [(s.family, s.loose) for s in bare] == [("cli:unknown-option", False)]
    assert bare[0].sig_sha == _sha("pip: error: no such option: --install-option")
    assert bare[0].sig_sha != _sha("no such option: --global-option")
    assert _sha("Error: unknown flag: --foo") == _sha("unknown flag: --foo")
    assert _sha("Error: unknown flag: --foo") != _sha("Error: unknown shorthand flag: 'f' in -f")
