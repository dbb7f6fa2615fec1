"""The sh -c lexer (gpulint.kube.commandline) against the real shell.

The lexer takes a run of ordinary characters, and a single-quoted stretch, in one step (#19), and remembers
the commands of a command line without '$' by its strings: its words must stay the ones /bin/sh makes of the
same script, each character pointing where it was written, whichever path read it.
"""

import subprocess

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gpulint.kube.commandline import (
    MAX_SCRIPT_CHARS,
    MAX_WORDS,
    ContainerEnv,
    Origin,
    OriginRun,
    _commands,
    container_commands,
    written_words,
)

# Pieces of a script without what the lexer leaves unknown or splits commands on ($, `, ;, &, |, parentheses,
# newlines) or what the shell expands on its own (globs, ~): words, blanks, quotes, escapes, comments.
PIECES = st.sampled_from(["a", "b1", "--tp", "=", "/", ".", " ", "\t", "'", '"', "\\", "#", "x y", "é"])
SCRIPTS = st.lists(PIECES, min_size=1, max_size=24).map("".join)
# eval reads the script as the shell reads sh -c's; its words are printed NUL-separated
SHELL_WORDS = 'eval "set -- $1" && printf "%s\\0" "$@"'


def shell_words(script: str) -> list[str] | None:
    """The words /bin/sh makes of ``script`` (None: the shell refuses it, an unterminated quote)."""
    done = subprocess.run(["/bin/sh", "-c", SHELL_WORDS, "sh", script], capture_output=True, timeout=10)
    if done.returncode != 0:
        return None
    return done.stdout.decode().split("\0")[:-1]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(SCRIPTS)
def test_the_lexer_makes_the_words_the_shell_makes(script):
    assume(not script.endswith("\\"))  # a backslash at the very end: the shells differ
    full = f"run {script}"  # "run" first: a leading NAME=value would be an assignment, not a word
    expected = shell_words(full)
    assume(expected is not None)
    container = {"command": ["sh", "-c", full]}
    commands = container_commands(container)  # remembered by its strings (no '$')
    assert [[word.text for word in command.words] for command in commands] == ([expected] if expected else [])
    for command in commands:
        for word in command.words:
            assert word.text is not None
            for index, char in enumerate(word.text):  # each character points where it was written
                assert word.at(index).path == ("command", 2)
                assert full[word.at(index).offset] == char
    assert container_commands(container) == commands  # asked again: the remembered answer
    assert _commands(container, ContainerEnv({}, False)) == commands  # the path that remembers nothing


def test_a_word_starts_where_its_first_character_was_written():
    (command,) = container_commands({"command": ["sh", "-c", 'run  \'a b\'c "d\\"e"']})
    assert [word.text for word in command.words] == ["run", "a bc", 'd"e']
    assert command.words[1].origin == Origin(("command", 2), 6)  # the quote's first character inside
    assert command.words[2].at(1) == Origin(("command", 2), 15)  # the escaped quote, not its backslash


@given(
    st.integers(0, 50),
    st.integers(0, 30),
    st.integers(-40, 40),
    st.one_of(st.none(), st.integers(-40, 40)),
    st.one_of(st.none(), st.integers(-40, 40)),
    st.one_of(st.none(), st.integers(-3, 3).filter(bool)),
)
def test_a_run_of_origins_is_the_tuple_of_its_origins(base, length, index, start, stop, step):
    """A word written as it runs keeps its origins as one OriginRun made on demand: every index, slice, length,
    equality and hash is the tuple's of one Origin per character."""
    run = OriginRun(("args", 1), base, length)
    written = tuple(Origin(("args", 1), base + offset) for offset in range(length))
    assert len(run) == len(written) and tuple(run) == written and run == written and hash(run) == hash(written)
    if -length <= index < length:
        assert run[index] == written[index]
    else:
        with pytest.raises(IndexError):
            run[index]
    assert tuple(run[start:stop:step]) == written[start:stop:step]


def _words(script: str, files: dict[str, str] | None = None) -> list[list[str | None]]:
    commands = container_commands({"command": ["sh", "-c", script]}, files=files)
    return [[word.text for word in command.words] for command in commands]


def test_a_variable_the_script_assigns_is_read_later_as_the_shell_reads_it():
    script = 'TP=4; export HOSTS="a,b"; run --tp $TP --host ${HOSTS}'
    assert _words(script)[-1] == ["run", "--tp", "4", "--host", "a,b"]
    # the real shell agrees (the words of the last command, the assignments run first)
    done = subprocess.run(["/bin/sh", "-c", script.replace("run", 'printf "%s\\0"')], capture_output=True, timeout=10)
    assert done.stdout.decode().split("\0")[:-1] == ["--tp", "4", "--host", "a,b"]


@pytest.mark.parametrize(
    "script",
    [
        '[ -n "$X" ] && TP=4; run --tp $TP',  # may not run
        "if true; then\nTP=4\nfi; run --tp $TP",  # inside a compound command
        "if true; then TP=4; fi; run --tp $TP",
        "TP=4; TP=8; run --tp $TP",  # assigned twice: which one holds where is not followed
        "TP=$(nproc); run --tp $TP",  # a command substitution gpulint cannot know
    ],
)
def test_a_script_variable_that_may_hold_another_value_is_unknown(script):
    assert _words(script)[-1] == ["run", "--tp", None]


def test_an_unassigned_variable_still_expands_to_nothing():
    assert _words("run --tp $TP x")[-1] == ["run", "--tp", "x"]


def test_a_known_file_read_by_cat_is_its_content():
    files = {"/etc/volcano/worker.host": "job-worker-0.job\njob-worker-1.job"}
    for script in (
        'H=`cat /etc/volcano/worker.host | tr "\\n" ","`; run --host $H',
        "H=$(cat /etc/volcano/worker.host | tr '\\n' ','); run --host $H",
    ):
        assert _words(script, files)[-1] == ["run", "--host", "job-worker-0.job,job-worker-1.job"]
    # unquoted, cat's lines are split into words; another file, or another filter, is not known
    assert _words("run $(cat /etc/volcano/worker.host)", files)[-1] == ["run", "job-worker-0.job", "job-worker-1.job"]
    assert _words("run $(cat /etc/hosts)", files)[-1] == ["run", None]
    assert _words("run $(cat /etc/volcano/worker.host | head -1)", files)[-1] == ["run", None]
    assert _words("run $(cat /etc/volcano/worker.host)")[-1] == ["run", None]  # no file known


@pytest.mark.parametrize(
    ("args", "read"),
    [
        (["x"] * (MAX_WORDS - 1), True),
        (["x"] * MAX_WORDS, False),  # command + args over MAX_WORDS words
        (["x" * (MAX_SCRIPT_CHARS - 3)], True),
        (["x" * (MAX_SCRIPT_CHARS - 2)], False),  # over MAX_SCRIPT_CHARS characters
        ([0] * 10_000, False),  # numbers are words too (a schema-invalid line is still bounded)
    ],
)
def test_a_command_line_is_read_within_the_bounds_only(args, read):
    container = {"command": ["run"], "args": args}
    assert (written_words(container) is not None) is read
    assert bool(container_commands(container)) is read


# How container commands hand a script to a shell: options before and after -c, option values, `--`.
SCRIPT = "echo ran"


@pytest.mark.parametrize(
    "argv",
    [
        ["bash", "-lc", "--", SCRIPT],
        ["/bin/sh", "-c", "--", SCRIPT],
        ["sh", "-ec", SCRIPT],
        ["bash", "-o", "pipefail", "-c", SCRIPT],
        ["bash", "-eo", "pipefail", "-c", SCRIPT],
        ["bash", "-O", "extglob", "-c", SCRIPT],
        ["bash", "+x", "-c", SCRIPT],
        ["bash", "--login", "-c", SCRIPT],
        ["bash", "--norc", "-ce", SCRIPT],
        ["bash", "-c", "-x", SCRIPT],
        ["sh", "-c", "-e", SCRIPT],
        ["bash", "-c", SCRIPT, "--"],
        ["bash", "--", "-c", SCRIPT],  # -c is a file name after --
        ["sh", "-e", "--", SCRIPT],  # no -c: the script is a file name
        ["bash", "-c"],
    ],
    ids=" ".join,
)
def test_the_script_is_the_one_the_shell_runs(argv):
    done = subprocess.run(argv, capture_output=True, timeout=10, stdin=subprocess.DEVNULL, env={"HOME": "/tmp"})
    runs_it = done.stdout.decode().splitlines()[-1:] == ["ran"]
    commands = [[w.text for w in c.words] for c in container_commands({"command": argv})]
    assert (commands == [["echo", "ran"]]) == runs_it, (commands, done.stdout, done.stderr)


def test_a_script_made_of_values_not_known_is_still_the_script():
    # `$(MODEL)` from a ConfigMap gpulint does not hold: the word's text is unknown, yet it is the operand after -c
    container = {
        "command": ["sh", "-c", "vllm serve $(MODEL) --max-num-seqs=$(SEQS)"],
        "envFrom": [{"configMapRef": {"name": "vllm-settings"}}],
    }
    assert [[w.text for w in c.words] for c in container_commands(container)] == [["vllm", "serve", None, None]]
    # before -c a word not known may be an option: no script is read
    unknown_first = {"command": ["sh", "$(FLAGS)", "-c", "vllm serve m"], "env": [{"name": "FLAGS", "valueFrom": {}}]}
    assert [[w.text for w in c.words] for c in container_commands(unknown_first)] == [
        ["sh", None, "-c", "vllm serve m"]
    ]
