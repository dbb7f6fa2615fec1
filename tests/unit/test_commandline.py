"""The sh -c lexer (gpulint.kube.commandline) against the real shell.

The lexer takes a run of ordinary characters, and a single-quoted stretch, in one step (#19), and remembers
the commands of a command line without '$' by its strings: its words must stay the ones /bin/sh makes of the
same script, each character pointing where it was written, whichever path read it.
"""

import subprocess

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gpulint.kube.commandline import ContainerEnv, Origin, OriginRun, _commands, container_commands

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
