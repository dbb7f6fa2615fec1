"""A container's command line as the processes in it will see it, with where each word was written.

Kubernetes expands ``$(VAR)`` in ``command`` and ``args`` from the container's environment
(``third_party/forked/golang/expansion``: ``$$`` is a literal ``$``; a name that is not defined
stays as written). ``sh -c SCRIPT`` then hands SCRIPT to a shell, which splits it into
commands and words and expands ``$VAR`` / ``${VAR}`` from the same environment. Both steps are
modelled here, and every character remembers the YAML string and the offset it came from, so
a finding can point at the flag inside a long ``args`` string.

A value from a ConfigMap (``env[].valueFrom.configMapKeyRef``, ``envFrom[].configMapRef``) is
read when the caller holds that ConfigMap (one of the linted files, in the pod's namespace).
What gpulint cannot know (a value from a Secret, ``$(command substitution)``, a ConfigMap it does
not hold) makes the word *unresolved* (``text`` None): the rules then stay silent rather than
guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from itertools import repeat
from typing import Any, NamedTuple, cast, overload

from gpulint.kube.fields import counted, dig, mapping, sequence, text
from gpulint.kube.lru import short_strings_remembered
from gpulint.kube.refs import Path

# Bounds on the work per container: a command line longer than these is not read (the rules that
# read it stay silent). Real launch lines have tens of words and a few KiB.
MAX_WORDS = 4_096
MAX_SCRIPT_CHARS = 100_000
# Command lines without a '$' remembered up to this length (bounds the memo's memory: 256 lines of at most 1 KiB).
MEMO_MAX_CHARS = 1_024

Env = Mapping[str, "str | None"]  # name -> value; None: defined, but gpulint cannot know the value
# The ConfigMaps a container may read, by name: their ``data`` (the caller's, of the pod's namespace).
ConfigMaps = Mapping[str, Mapping[str, str]]


class Origin(NamedTuple):
    """Where a character was written: the YAML string (path from the container) and its offset (one per
    character of a command line: a tuple, the cheapest immutable record)."""

    path: Path
    offset: int


class OriginRun(Sequence[Origin]):
    """The origins of ``length`` characters written one after another from ``base`` in one string, made
    only when asked: most words are never pointed inside (a word written as it runs is one run)."""

    __slots__ = ("base", "length", "path")

    def __init__(self, path: Path, base: int, length: int) -> None:
        self.path, self.base, self.length = path, base, length

    def __len__(self) -> int:
        return self.length

    @overload
    def __getitem__(self, index: int) -> Origin: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Origin]: ...
    def __getitem__(self, index: int | slice) -> Origin | Sequence[Origin]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self.length)
            if step != 1:
                return tuple(self)[index]
            return OriginRun(self.path, self.base + start, max(stop - start, 0))
        if index < 0:
            index += self.length
        if not 0 <= index < self.length:
            raise IndexError(index)
        return Origin(self.path, self.base + index)

    def __iter__(self) -> Iterator[Origin]:
        return iter(_origins(self.path, self.base, self.length))

    def __eq__(self, other: object) -> bool:
        return tuple(self) == tuple(other) if isinstance(other, Sequence) else NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"OriginRun({self.path!r}, {self.base}, {self.length})"


@dataclass(frozen=True)
class Word:
    text: str | None  # None: part of it cannot be known offline
    origin: Origin  # where the word starts
    origins: Sequence[Origin] = ()  # one per character of ``text`` (for pointing inside the word)
    prefix: str = ""  # of an unresolved word: its known characters before the first unknown one

    def at(self, index: int) -> Origin:
        return self.origins[index] if 0 <= index < len(self.origins) else self.origin


@dataclass(frozen=True)
class Command:
    """One simple command: its words, and the variables assigned in front of it (``VAR=x cmd``)."""

    words: tuple[Word, ...]
    # Read-only: a command line is remembered by its strings and shared by every container that writes it.
    assignments: Mapping[str, str | None] = field(default_factory=dict)


# --- the container's environment ---------------------------------------------------------------


@dataclass(frozen=True)
class ContainerEnv:
    values: dict[str, str | None]  # every name the container defines (None: value unknown)
    open: bool  # envFrom (or an injected environment) may define names not listed here
    # Files a controller writes into the container, by path (Volcano's svc plugin host lists): what
    # `$(cat FILE)` reads. Any other command substitution stays unknown.
    files: Mapping[str, str] = field(default_factory=dict)

    def lookup(self, name: str) -> tuple[bool, str | None]:
        """(defined, value); an undefined name of an open environment counts as unknown."""
        if name in self.values:
            return True, self.values[name]
        return (True, None) if self.open else (False, None)


def container_env(
    container: Mapping[str, Any],
    injected: Env | None = None,
    config_maps: ConfigMaps | None = None,
    files: Mapping[str, str] | None = None,
) -> ContainerEnv:
    """The container's variables as the kubelet builds them: ``envFrom`` sources, then ``env`` in order (each
    value may use ``$(EARLIER)``), after those a controller injects (LeaderWorkerSet's ``LWS_GROUP_SIZE``, ...)."""
    values: dict[str, str | None] = dict(injected or {})
    open_env = _env_from(container, values, config_maps or {})
    entries = sequence(container.get("env"))
    if len(entries) > MAX_WORDS:
        return ContainerEnv(values, True, files or {})  # not read: every name may be defined, no value is known
    for item in entries:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        raw = item.get("value")
        if "valueFrom" in item:
            values[item["name"]] = config_map_value(item, config_maps or {})
            continue
        if not isinstance(raw, (str, int, float)) or isinstance(raw, bool):
            values[item["name"]] = None if raw is not None else ""
            continue
        expanded = kubernetes_expand(str(raw), Origin((), 0), ContainerEnv(values, open_env))
        values[item["name"]] = None if any(c is None for c, _ in expanded) else "".join(c for c, _ in expanded)  # type: ignore[misc]
    return ContainerEnv(values, open_env, files or {})


def config_map_value(item: Mapping[str, Any], config_maps: ConfigMaps) -> str | None:
    """An ``env`` entry's ``valueFrom.configMapKeyRef`` read from a ConfigMap the caller holds (None: not known)."""
    ref = mapping(mapping(item.get("valueFrom")).get("configMapKeyRef"))
    data = config_maps.get(text(ref.get("name")))
    value = data.get(text(ref.get("key"))) if data is not None else None
    return value if isinstance(value, str) else None


def _env_from(container: Mapping[str, Any], values: dict[str, str | None], config_maps: ConfigMaps) -> bool:
    """Adds the variables of the container's ``envFrom`` ConfigMaps the caller holds; True when a source is
    not known (a Secret, a ConfigMap not held): any name may then be defined, with an unknown value."""
    sources = sequence(container.get("envFrom"))
    if len(sources) > MAX_WORDS:
        return True
    unknown = False
    for source in sources:
        source = mapping(source)
        data = config_maps.get(text(mapping(source.get("configMapRef")).get("name")))
        if data is None:
            unknown = True
            continue
        prefix = text(source.get("prefix"))
        values.update({prefix + key: value for key, value in data.items() if isinstance(value, str)})
    return unknown


def referenced_config_maps(container: Mapping[str, Any], config_maps: ConfigMaps) -> ConfigMaps:
    """The held ConfigMaps the container's ``env`` and ``envFrom`` name (the part of them that can change it)."""
    names = {
        text(mapping(mapping(source).get("configMapRef")).get("name")) for source in sequence(container.get("envFrom"))
    }
    names.update(text(dig(item, "valueFrom", "configMapKeyRef", "name")) for item in sequence(container.get("env")))
    return {name: config_maps[name] for name in sorted(names) if name in config_maps}


# --- Kubernetes $(VAR) expansion ---------------------------------------------------------------

Chars = list[tuple["str | None", Origin]]  # None: an unknown stretch (one marker per unknown value)


_NEW_ORIGIN = cast("Callable[[tuple[Path, int]], Origin]", partial(tuple.__new__, Origin))


def _origins(path: Path, base: int, length: int) -> tuple[Origin, ...]:
    """The origins of ``length`` characters written one after another from ``base`` (made without a
    Python call per character: command lines are read character by character)."""
    return tuple(map(_NEW_ORIGIN, zip(repeat(path), range(base, base + length))))


def kubernetes_expand(value: str, origin: Origin, env: ContainerEnv) -> Chars:
    """``value`` with ``$(VAR)`` replaced as the kubelet does (expansion.Expand); each character
    keeps its origin (a substituted value points at its ``$``)."""
    base = origin.offset
    if "$" not in value:  # nothing to expand (most words)
        return list(zip(value, _origins(origin.path, base, len(value))))
    out: Chars = []
    index = 0

    def at(i: int) -> Origin:
        return Origin(origin.path, base + i)

    while index < len(value):
        char = value[index]
        if char != "$" or index + 1 >= len(value):
            out.append((char, at(index)))
            index += 1
            continue
        nxt = value[index + 1]
        if nxt == "$":  # $$ is an escaped $
            out.append(("$", at(index)))
            index += 2
            continue
        if nxt == "(":
            close = value.find(")", index + 2)
            if close != -1:
                name = value[index + 2 : close]
                defined, known = env.lookup(name)
                if defined:
                    if known is None:
                        out.append((None, at(index)))
                    else:
                        out.extend((c, at(index)) for c in known)
                    index = close + 1
                    continue
        out.append((char, at(index)))
        index += 1
    return out


# --- the shell ---------------------------------------------------------------------------------

SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh"})
_SEPARATORS = frozenset(";&|()\n")
# Characters the lexer treats specially outside quotes, and inside double quotes: any other is part of the word.
_SPECIAL: frozenset[str | None] = frozenset(" \t;&|()\n#\\'\"$`")
_DOUBLE_QUOTED_SPECIAL: frozenset[str | None] = frozenset('"\\$`')
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)
# The words that open and close a compound command: an assignment inside one may not run.
_COMPOUND_OPEN = frozenset({"if", "while", "until", "for", "case"})
_COMPOUND_CLOSE = frozenset({"fi", "done", "esac"})
_ASSIGNING_WORDS = frozenset({"export", "readonly", "then", "else", "do", "{"})
# `cat FILE`, alone or piped to `tr '\n' ','` (each line a comma-separated entry): a file read in a substitution.
_CAT_FILE = re.compile(
    r"""\s*cat\s+(?P<path>/[\w./-]+)\s*(?:\|\s*tr\s+(?P<q>["']?)\\n(?P=q)\s+(?P<r>["']?),(?P=r)\s*)?"""
)
# Commands that run the rest of their words as a command (``exec vllm serve ...``).
_WRAPPERS = frozenset({"exec", "nohup", "time", "command"})


class _Lexer:
    """POSIX shell words and command separators, enough for the launch lines found in manifests."""

    def __init__(self, chars: Chars, env: ContainerEnv) -> None:
        self.chars = chars
        self.env = env
        self.pos = 0
        self.commands: list[list[Word]] = [[]]
        self._word: list[tuple[str | None, Origin]] = []
        self._started = False
        self.shell: dict[str, str | None] = {}  # variables the script assigns (None: value unknown)
        self._compound = 0  # depth of if/while/until/for/case: an assignment inside may not run
        self._after_and_or = False  # the command follows && or ||: it may not run

    def _peek(self, ahead: int = 0) -> str | None:
        return self._peek_at(self.pos + ahead)

    def _peek_at(self, index: int) -> str | None:
        return self.chars[index][0] if index < len(self.chars) else ""

    def _origin(self) -> Origin:
        return self.chars[min(self.pos, len(self.chars) - 1)][1]

    def _end_word(self) -> None:
        if self._started:
            texts, origins = tuple(zip(*self._word)) or ((), ())  # the characters, and where each was written
            known = None not in texts
            start = origins[0] if origins else self._origin()
            value = "".join(texts) if known else None
            self.commands[-1].append(Word(value, start, origins if known else (), "" if known else _prefix(texts)))
        self._word = []
        self._started = False

    def _end_command(self, separator: str = "\n") -> None:
        self._end_word()
        words = self.commands[-1]
        if words:
            self._assign(words, conditional=self._compound > 0 or self._after_and_or)
            first = words[0].text
            self._compound += first in _COMPOUND_OPEN
            self._compound = max(0, self._compound - (first in _COMPOUND_CLOSE))
            self.commands.append([])
            self._after_and_or = separator in "&|"
        elif separator in "&|":
            self._after_and_or = True  # the second character of && or ||

    def _assign(self, words: list[Word], conditional: bool) -> None:
        """A command of assignments only (``HOSTS=...``, ``export HOSTS=...``) sets shell variables for the rest
        of the script. One that may not run, or a name assigned twice, leaves the value unknown."""
        while words and words[0].text in _ASSIGNING_WORDS:
            words = words[1:]  # `then HOSTS=...`, `export HOSTS=...`: still assignments
        if not words:
            return
        found: list[tuple[str, str | None]] = []
        for word in words:
            # an unknown word's known prefix (NAME=, NAME=abc) still names the variable; its value is unknown
            match = _ASSIGNMENT.fullmatch(word.text if word.text is not None else word.prefix)
            if match is None:
                return  # a command, not only assignments
            found.append((match.group(1), match.group(2) if word.text is not None else None))
        for name, value in found:
            again = name in self.shell and self.shell[name] != value
            self.shell[name] = None if conditional or again else value

    def _add(self, char: str | None, origin: Origin) -> None:
        self._word.append((char, origin))
        self._started = True

    def run(self) -> list[list[Word]]:
        while self.pos < len(self.chars):
            char, origin = self.chars[self.pos]
            if char is None:
                self._add(None, origin)
                self.pos += 1
            elif char in " \t":
                self._end_word()
                self.pos += 1
            elif char in _SEPARATORS:
                self._end_command(char)
                self.pos += 1
            elif char == "#" and not self._started:
                while self.pos < len(self.chars) and self.chars[self.pos][0] != "\n":
                    self.pos += 1
            elif char == "\\":
                nxt = self._peek(1)
                if nxt == "\n":
                    self.pos += 2  # a line continuation
                elif nxt:
                    self._add(nxt, self.chars[self.pos + 1][1])
                    self.pos += 2
                else:
                    self.pos += 1
            elif char == "'":
                self._started = True
                end = self.pos + 1
                while end < len(self.chars) and self.chars[end][0] != "'":
                    end += 1
                self._word.extend(self.chars[self.pos + 1 : end])  # every character literal, to the closing quote
                self.pos = end + 1
            elif char == '"':
                self._started = True
                self.pos += 1
                self._double_quoted()
            elif char == "$":
                self._dollar(quoted=False)
            elif char == "`":
                self._backquoted(origin, quoted=False)
            else:
                self._ordinary(_SPECIAL)
        self._end_command()
        return [words for words in self.commands if words]

    def _ordinary(self, special: frozenset[str | None]) -> None:
        """The character at ``pos`` and the ones after it up to the next ``special`` one, added to the word in one
        step (most characters of a script are ordinary; an unknown stretch, None, is one too)."""
        chars, end = self.chars, self.pos + 1
        while end < len(chars) and chars[end][0] not in special:
            end += 1
        self._word.extend(chars[self.pos : end])
        self._started = True
        self.pos = end

    def _double_quoted(self) -> None:
        while self.pos < len(self.chars):
            char, origin = self.chars[self.pos]
            if char == '"':
                self.pos += 1
                return
            if char == "\\" and self._peek(1) in ('"', "\\", "$", "`", "\n"):
                if self._peek(1) != "\n":
                    self._add(*self.chars[self.pos + 1])
                self.pos += 2
            elif char == "$":
                self._dollar(quoted=True)
            elif char == "`":
                self._backquoted(origin, quoted=True)
            else:
                self._ordinary(_DOUBLE_QUOTED_SPECIAL)

    def _backquoted(self, origin: Origin, quoted: bool) -> None:
        """`command` substitution: known only when it reads a file the container is known to hold."""
        start = self.pos + 1
        self.pos = start
        while self.pos < len(self.chars) and self.chars[self.pos][0] != "`":
            self.pos += 1
        self._substitute(self.chars[start : self.pos], origin, quoted)
        self.pos += 1

    def _substitute(self, body: Chars, origin: Origin, quoted: bool) -> None:
        """The output of a command substitution (its trailing newlines removed, as the shell does), or unknown."""
        script = "".join(c for c, _ in body) if all(c is not None for c, _ in body) else None  # type: ignore[misc]
        output = file_output(script, self.env.files) if script is not None else None
        if output is None:
            self._add(None, origin)
            return
        self._insert(output.rstrip("\n"), origin, quoted)

    def _insert(self, value: str, origin: Origin, quoted: bool) -> None:
        for char in value:
            if not quoted and char in " \t\n":
                self._end_word()  # field splitting of an unquoted expansion
            else:
                self._add(char, origin)

    def _dollar(self, quoted: bool) -> None:
        origin = self.chars[self.pos][1]
        nxt = self._peek(1)
        if nxt == "(":  # $(command) or $((arithmetic)): known only when it reads a known file
            start, depth = self.pos, 0
            while self.pos < len(self.chars):
                char = self.chars[self.pos][0]
                depth += char == "("
                depth -= char == ")"
                self.pos += 1
                if depth == 0 and char == ")":
                    break
            arithmetic = self._peek_at(start + 2) == "("
            if arithmetic:
                self._add(None, origin)
            else:
                self._substitute(self.chars[start + 2 : self.pos - 1], origin, quoted)
            return
        if nxt == "{":
            close = self.pos + 2
            while close < len(self.chars) and self.chars[close][0] != "}":
                close += 1
            body = "".join(c or "\0" for c, _ in self.chars[self.pos + 2 : close])
            self.pos = close + 1
            self._expand(body, origin, quoted)
            return
        name = ""
        scan = self.pos + 1
        while scan < len(self.chars) and (self.chars[scan][0] or "\0").isascii():
            candidate = name + (self.chars[scan][0] or "\0")
            if not _NAME.fullmatch(candidate):
                break
            name = candidate
            scan += 1
        if not name:
            if nxt and nxt in "@*#?$!-0123456789":
                self._add(None, origin)  # special parameters
                self.pos += 2
                return
            self._add("$", origin)
            self.pos += 1
            return
        self.pos = scan
        self._expand(name, origin, quoted)

    def _expand(self, body: str, origin: Origin, quoted: bool) -> None:
        name = _NAME.match(body)
        if name is None or name.end() != len(body):  # ${VAR:-x}, ${#VAR}, ...: not modelled
            self._add(None, origin)
            return
        defined, value = (True, self.shell[body]) if body in self.shell else self.env.lookup(body)
        if not defined:
            value = ""  # the shell expands an unset variable to nothing
        if value is None:
            self._add(None, origin)
            return
        self._insert(value, origin, quoted)


def file_output(script: str, files: Mapping[str, str]) -> str | None:
    """What ``cat FILE`` (or ``cat FILE | tr '\\n' ','``) prints when FILE is a known file; None otherwise."""
    match = _CAT_FILE.fullmatch(script) if files else None
    if match is None or match.group("path") not in files:
        return None
    content = files[match.group("path")]
    return content.replace("\n", ",") if match.group("q") is not None else content


def _prefix(texts: Sequence[str | None]) -> str:
    """The characters before the first unknown one."""
    end = texts.index(None) if None in texts else len(texts)
    return "".join(cast("Sequence[str]", texts[:end]))


def shell_commands(chars: Chars, env: ContainerEnv) -> list[Command]:
    """The simple commands of a shell script (``;``, ``&&``, ``|``, newlines separate them)."""
    return [_command(words) for words in _Lexer(chars, env).run()]


def _command(words: list[Word]) -> Command:
    assignments: dict[str, str | None] = {}
    index = 0
    while index < len(words):
        word = words[index]
        if word.text is not None and (match := _ASSIGNMENT.fullmatch(word.text)):
            assignments[match.group(1)] = match.group(2)
            index += 1
        elif word.text in _WRAPPERS:
            index += 1
        elif word.text == "env":
            index += 1
            while index < len(words) and words[index].text is not None and words[index].text.startswith("-"):  # type: ignore[union-attr]
                index += 1
        else:
            break
    return Command(tuple(words[index:]), assignments)


# --- a container's command line ---------------------------------------------------------------


def _argument_words(container: Mapping[str, Any], env: ContainerEnv) -> list[tuple[Word, Chars | None]]:
    """Each word of ``command`` and ``args`` after Kubernetes' expansion, with its characters (None: the
    word is written as it runs, its characters are its text and its origins one run)."""
    out: list[tuple[Word, Chars | None]] = []
    for field_name in ("command", "args"):
        for index, item in enumerate(sequence(container.get(field_name))):
            if isinstance(item, bool) or not isinstance(item, (str, int, float)):
                continue
            value, origin = str(item), Origin((field_name, index), 0)
            if "$" not in value:  # written as it runs: nothing unknown, its origins one run
                out.append((Word(value, origin, OriginRun(origin.path, 0, len(value))), None))
                continue
            chars = kubernetes_expand(value, origin, env)
            known = all(c is not None for c, _ in chars)
            word = Word(
                "".join(c for c, _ in chars) if known else None,  # type: ignore[misc]
                Origin((field_name, index), 0),
                tuple(o for _, o in chars) if known else (),
                "" if known else _prefix(tuple(c for c, _ in chars)),
            )
            out.append((word, chars))
    return out


# Shell options whose value is the next word: sh's and bash's -o/+o NAME (in a group too, -eo pipefail),
# bash's -O/+O NAME (shopt) and --rcfile/--init-file FILE (bash(1) INVOCATION, dash(1) Invocation).
_SHELL_VALUE_LETTERS = frozenset("oO")
_SHELL_VALUE_OPTIONS = frozenset({"--rcfile", "--init-file"})


def _shell_script_index(words: list[Word]) -> int | None:
    """Index of the script of ``sh -c SCRIPT``, or None: the first word after the shell's options, when they
    hold -c (``bash -lc``, ``/bin/sh -ec``, ``bash -o pipefail -c``, ``bash -c -x``, ``bash -lc -- SCRIPT``)."""
    if not words or words[0].text is None or basename(words[0].text) not in SHELLS:
        return None
    reads_script, index = False, 1
    while index < len(words):
        option = words[index].text
        if option is None:  # a word made of values not known: after -c, the script (an option is written out)
            if not reads_script:
                return None
            break
        index += 1
        if option in ("--", "-"):  # the end of the options
            break
        if option.startswith("--"):  # bash's --login, --norc
            index += option in _SHELL_VALUE_OPTIONS
        elif option[:1] in ("-", "+") and len(option) > 1:
            reads_script = reads_script or (option[0] == "-" and "c" in option[1:])
            index += sum(letter in _SHELL_VALUE_LETTERS for letter in option[1:])
        else:
            index -= 1  # the first operand
            break
    return index if reads_script and index < len(words) else None


def written_words(container: Mapping[str, Any]) -> list[Any] | None:
    """The container's ``command`` then ``args`` as written, or None when they are over the bounds on the
    work per container. Counted before anything is joined or scanned: a review of a million arguments
    costs a length check, not a pass over each of them per rule."""
    command, args = sequence(container.get("command")), sequence(container.get("args"))
    if len(command) + len(args) > MAX_WORDS:
        return None
    raw = [*command, *args]
    if sum(len(item) for item in raw if isinstance(item, str)) > MAX_SCRIPT_CHARS:
        return None
    return raw


def container_commands(
    container: Mapping[str, Any],
    injected: Env | None = None,
    config_maps: ConfigMaps | None = None,
    files: Mapping[str, str] | None = None,
) -> list[Command]:
    """The commands the container runs: its argv, or the commands of its ``sh -c`` script.

    A container without ``command`` runs its image's entrypoint, which the manifest does not
    show; its ``args`` are returned as they are (the caller knows a few images' entrypoints).
    """
    command, args = sequence(container.get("command")), sequence(container.get("args"))
    raw = written_words(container)
    if raw is None:
        return []
    chars = sum(len(item) for item in raw if isinstance(item, str))
    # only a '$' reads the environment (Kubernetes' $(VAR), the shell's $VAR): without one it is not built
    expands = any(isinstance(item, str) and "$" in item for item in raw)
    if not expands and not files and chars <= MEMO_MAX_CHARS and all(type(item) is str for item in raw):
        return list(_written_commands(tuple(command), tuple(args)))
    env = container_env(container, injected, config_maps, files) if expands else ContainerEnv({}, False, files or {})
    return _commands(container, env)


@lru_cache(maxsize=256)
def _written_commands(command: tuple[str, ...], args: tuple[str, ...]) -> tuple[Command, ...]:
    """The commands of a command line without a '$' (it reads no variable): a pure function of its strings,
    remembered - real manifests repeat their command lines (a chart's pods, a job's replicas)."""
    return tuple(_commands({"command": list(command), "args": list(args)}, ContainerEnv({}, False)))


def _commands(container: Mapping[str, Any], env: ContainerEnv) -> list[Command]:
    words = _argument_words(container, env)
    plain = [word for word, _ in words]
    script = _shell_script_index(plain)
    if script is None:
        return [_command(plain)] if plain else []
    word, chars = words[script]
    if chars is None:
        chars = list(zip(word.text or "", word.origins))
    if len(chars) > MAX_SCRIPT_CHARS:
        return []
    return shell_commands(chars, env)


def basename(program: str) -> str:
    return program.rstrip("/").rsplit("/", 1)[-1]


def image_name(container: Mapping[str, Any]) -> str:
    """The image without registry, tag and digest: ``vllm/vllm-openai``."""
    return _image_name(text(container.get("image")))


@short_strings_remembered(1024)  # several rules ask it of each container; a repository repeats its images
def _image_name(reference: str) -> str:
    image = reference.split("@", 1)[0]
    last = image.rsplit("/", 1)
    if ":" in last[-1]:
        image = image[: image.rfind(":")]
    parts = image.split("/")
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]  # a registry host
    return "/".join(parts)


# A PyTorch DataLoader's worker count given on the command line: an option (--num_workers, --num-workers,
# HF Trainer's --dataloader_num_workers) or a dotted config override (yacs/detectron2 DATALOADER.NUM_WORKERS 8,
# Hydra dataloader.num_workers=8). A bare NUM_WORKERS=8 is left out: servers (gunicorn) name their workers so.
_WORKERS_KEY = re.compile(r"^(?:--(?:[\w.-]*[._-])?|(?:\w+[.])+)num[_-]workers$", re.IGNORECASE)


def dataloader_workers(commands: Sequence[Command]) -> tuple[int, str] | None:
    """(workers, the option as written) of the first command line that starts DataLoader workers (more than 0)."""
    for command in commands:
        words = [word.text for word in command.words]
        for index, word in enumerate(words):
            if word is None:
                continue
            key, equals, value = word.partition("=")
            if not _WORKERS_KEY.match(key):
                continue
            if not equals:
                value = (words[index + 1] or "") if index + 1 < len(words) else ""
            if count := counted(value):
                return count, f"{key} {value}"
    return None


def go_flag(arguments: Sequence[Any], name: str) -> str | None:
    """A Go program's flag among its arguments as its flag parser reads it (Go's flag package, urfave/cli):
    ``--name=value``, ``-name=value``, ``--name value`` or ``-name value``; None when it is not given."""
    for index, argument in enumerate(arguments):
        argument = text(argument)
        for prefix in (f"--{name}", f"-{name}"):
            if argument.startswith(prefix + "="):
                return argument[len(prefix) + 1 :]
            if argument == prefix:
                return text(arguments[index + 1]) if index + 1 < len(arguments) else ""
    return None
