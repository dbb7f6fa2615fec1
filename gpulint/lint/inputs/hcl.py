"""Terraform's HCL, read far enough to know the literal values a configuration writes: never evaluated, never run.

The native syntax (hashicorp/hcl v2 hclsyntax/spec.md): a body of attributes (``name = expression``, one a line)
and blocks (``type "label" { body }``); comments ``#``, ``//`` and ``/* */``. An expression is known when it is a
literal: a string (its escapes read), a heredoc (``<<EOT``, and ``<<-EOT`` with the common indent removed), a
number, ``true``/``false``/``null``, a tuple ``[...]`` or an object ``{...}`` of known items, or a call of a function
named in CALLS with its arguments. A template interpolation is known only for ``path.module``, ``path.root`` and
``path.cwd`` (the module's folder, ``.`` when read from it); any other (``${var.x}``, ``${module.eks.name}``) is a
hole in the string. Every other expression (a reference, an operator, a conditional, a ``for``) is UNKNOWN.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 64  # nested brackets, blocks and interpolations: deeper is not a configuration anyone writes
CALLS = frozenset({"file", "templatefile", "yamlencode", "jsonencode"})
_PATHS = frozenset({"path.module", "path.root", "path.cwd"})


class HclError(ValueError):
    """Text that is not HCL's native syntax (as far as this reader goes)."""


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()  # a value the configuration gives that only Terraform can compute


@dataclass(frozen=True)
class Template:
    """A string with holes: its literal parts, None where an interpolation Terraform computes stands."""

    parts: tuple[str | None, ...]
    directive: bool = False  # a `%{ if }` or `%{ for }`: which of its parts stand is not known


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple[Any, ...]


@dataclass
class Block:
    type: str
    labels: tuple[str, ...]
    line: int
    attributes: dict[str, Any] = field(default_factory=dict)
    blocks: list[Block] = field(default_factory=list)


@dataclass(frozen=True)
class _Token:
    kind: str  # str (value: a Template), ident, num, punct, nl
    value: Any
    line: int


_IDENT = re.compile(r"[A-Za-z_][\w-]*")
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_HEREDOC = re.compile(r"<<(-?)([A-Za-z_][\w-]*)[ \t]*\r?\n")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
_OPERATORS = ("==", "!=", "<=", ">=", "&&", "||", "=>", "...")


def _interpolation_end(text: str, start: int) -> int:
    """The index just past the ``}`` closing the interpolation whose body starts at ``start``."""
    depth, index = 1, start
    while index < len(text):
        char = text[index]
        if char == '"':
            index = _string_end(text, index + 1)
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    raise HclError("an interpolation is not closed")


def _string_end(text: str, index: int) -> int:
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
        elif char in "$%" and text.startswith("{", index + 1):
            index = _interpolation_end(text, index + 2)
        elif char == '"':
            return index + 1
        elif char == "\n":
            raise HclError("a string is not closed on its line")
        else:
            index += 1
    raise HclError("a string is not closed")


def template_parts(text: str) -> Template:
    """A template file's text (``templatefile``) as a template: its ``${...}`` holes (``path.module`` known)."""
    return _parts(text, escapes=False)


def _parts(text: str, escapes: bool) -> Template:
    """A template's literal parts and holes (escapes read in a quoted string, not in a heredoc)."""
    parts: list[str | None] = []
    directive = False
    literal: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if escapes and char == "\\" and index + 1 < len(text):
            following = text[index + 1]
            if following == "u" and re.fullmatch(r"[0-9A-Fa-f]{4}", text[index + 2 : index + 6]):
                literal.append(chr(int(text[index + 2 : index + 6], 16)))
                index += 6
                continue
            literal.append(_ESCAPES.get(following, following))
            index += 2
        elif text.startswith(("$${", "%%{"), index):
            literal.append(text[index] + "{")
            index += 3
        elif text.startswith(("${", "%{"), index):
            end = _interpolation_end(text, index + 2)
            inner = text[index + 2 : end - 1].strip().strip("~").strip()
            directive = directive or char == "%"
            if char == "$" and inner in _PATHS:
                literal.append(".")
            else:
                parts.append("".join(literal))
                literal = []
                parts.append(None)
            index = end
        else:
            literal.append(char)
            index += 1
    parts.append("".join(literal))
    return Template(tuple(p for p in parts if p != ""), directive)


def _heredoc_text(lines: list[str], strip: bool) -> str:
    if strip:  # <<-: the smallest indent of the lines that are not blank is removed from each
        indents = [len(line) - len(line.lstrip(" \t")) for line in lines if line.strip()]
        cut = min(indents, default=0)
        lines = [line[cut:] for line in lines]
    return "".join(line + "\n" for line in lines)


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    index, line = 0, 1
    while index < len(text):
        char = text[index]
        if char == "\n":
            tokens.append(_Token("nl", "\n", line))
            line += 1
            index += 1
        elif char in " \t\r":
            index += 1
        elif char == "#" or text.startswith("//", index):
            end = text.find("\n", index)
            index = len(text) if end < 0 else end
        elif text.startswith("/*", index):
            end = text.find("*/", index + 2)
            if end < 0:
                raise HclError("a comment is not closed")
            line += text.count("\n", index, end)
            index = end + 2
        elif char == '"':
            end = _string_end(text, index + 1)
            tokens.append(_Token("str", _parts(text[index + 1 : end - 1], escapes=True), line))
            index = end
        elif (heredoc := _HEREDOC.match(text, index)) is not None:
            start = heredoc.end()
            body: list[str] = []
            position = start
            while True:
                end = text.find("\n", position)
                current = text[position : len(text) if end < 0 else end].rstrip("\r")
                if current.strip() == heredoc.group(2):
                    break
                if end < 0:
                    raise HclError(f"a heredoc is not closed by {heredoc.group(2)}")
                body.append(current)
                position = end + 1
            tokens.append(_Token("str", _parts(_heredoc_text(body, heredoc.group(1) == "-"), escapes=False), line))
            line += len(body) + 1
            index = position + len(current)
        elif (word := _IDENT.match(text, index)) is not None:
            tokens.append(_Token("ident", word.group(0), line))
            index = word.end()
        elif (number := _NUMBER.match(text, index)) is not None:
            tokens.append(_Token("num", number.group(0), line))
            index = number.end()
        else:
            operator = next((op for op in _OPERATORS if text.startswith(op, index)), char)
            tokens.append(_Token("punct", operator, line))
            index += len(operator)
    return tokens


_OPEN = {"{": "}", "[": "]", "(": ")"}


class _Parser:
    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.index = 0

    def peek(self, offset: int = 0) -> _Token | None:
        at = self.index + offset
        return self.tokens[at] if at < len(self.tokens) else None

    def body(self, depth: int, closed: bool) -> tuple[dict[str, Any], list[Block]]:
        attributes: dict[str, Any] = {}
        blocks: list[Block] = []
        while (token := self.peek()) is not None:
            if token.kind == "nl":
                self.index += 1
            elif token.kind == "punct" and token.value == "}" and closed:
                self.index += 1
                return attributes, blocks
            elif token.kind != "ident":
                raise HclError(f"line {token.line}: expected an attribute or a block")
            elif (following := self.peek(1)) is not None and following.kind == "punct" and following.value == "=":
                self.index += 2
                attributes[token.value] = _value(self.expression({"nl"}), depth + 1)
            else:
                blocks.append(self.block(depth + 1))
        if closed:
            raise HclError("a block is not closed")
        return attributes, blocks

    def block(self, depth: int) -> Block:
        if depth > MAX_DEPTH:
            raise HclError("blocks nested too deep")
        head = self.tokens[self.index]
        self.index += 1
        labels: list[str] = []
        while (token := self.peek()) is not None and token.kind in ("str", "ident"):
            labels.append("".join(p or "" for p in token.value.parts) if token.kind == "str" else token.value)
            self.index += 1
        if token is None or token.value != "{":
            raise HclError(f"line {head.line}: expected a block's {{")
        self.index += 1
        attributes, blocks = self.body(depth, closed=True)
        return Block(head.value, tuple(labels), head.line, attributes, blocks)

    def expression(self, ends: set[str]) -> list[_Token]:
        """The tokens of one expression, to the first of ``ends`` (a punctuation or "nl") outside brackets."""
        taken: list[_Token] = []
        closers: list[str] = []
        while (token := self.peek()) is not None:
            if not closers and (token.kind == "nl" and "nl" in ends or token.kind == "punct" and token.value in ends):
                break
            if token.kind == "punct" and token.value in _OPEN:
                closers.append(_OPEN[token.value])
                if len(closers) > MAX_DEPTH:
                    raise HclError("brackets nested too deep")
            elif token.kind == "punct" and token.value in _OPEN.values():
                if not closers:
                    break
                if closers.pop() != token.value:
                    raise HclError(f"line {token.line}: brackets do not match")
            self.index += 1
            if token.kind != "nl" or closers:
                taken.append(token)
        if closers:
            raise HclError("an expression is not closed")
        return taken


def _value(tokens: list[_Token], depth: int) -> Any:
    """What the expression's tokens write, when it is a literal (UNKNOWN otherwise)."""
    while tokens and tokens[0].kind == "nl":
        tokens = tokens[1:]
    while tokens and tokens[-1].kind == "nl":
        tokens = tokens[:-1]
    if depth > MAX_DEPTH or not tokens:
        return UNKNOWN
    first = tokens[0]
    if len(tokens) == 1:
        if first.kind == "str":
            template: Template = first.value
            return template if None in template.parts else "".join(p or "" for p in template.parts)
        if first.kind == "num":
            number = float(first.value)
            return int(number) if number.is_integer() and re.fullmatch(r"\d+", first.value) else number
        if first.kind == "ident" and first.value in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[first.value]
        return UNKNOWN
    if first.kind == "punct" and first.value in "[{" and _closes(tokens):
        inner = _Parser(tokens[1:-1])
        return _tuple(inner, depth) if first.value == "[" else _object(inner, depth)
    if first.kind == "ident" and first.value in CALLS and tokens[1].value == "(" and _closes(tokens[1:]):
        inner = _Parser(tokens[2:-1])
        args: list[Any] = []
        while inner.peek() is not None:
            args.append(_value(inner.expression({","}), depth + 1))
            inner.index += 1  # the comma
        return Call(first.value, tuple(args))
    if first.kind == "punct" and first.value == "-" and len(tokens) == 2 and tokens[1].kind == "num":
        number = _value(tokens[1:], depth)
        return -number if isinstance(number, (int, float)) else UNKNOWN
    return UNKNOWN


def _closes(tokens: list[_Token]) -> bool:
    """The first token's bracket is closed by the last token (and not before)."""
    depth = 0
    for position, token in enumerate(tokens):
        if token.kind == "punct" and token.value in _OPEN:
            depth += 1
        elif token.kind == "punct" and token.value in _OPEN.values():
            depth -= 1
            if depth == 0:
                return position == len(tokens) - 1
    return False


def _tuple(inner: _Parser, depth: int) -> Any:
    items: list[Any] = []
    while inner.peek() is not None:
        taken = inner.expression({","})
        if taken and taken[0].kind == "ident" and taken[0].value == "for":
            return UNKNOWN
        if any(t.kind != "nl" for t in taken):
            items.append(_value(taken, depth + 1))
        inner.index += 1
    return items


def _object(inner: _Parser, depth: int) -> Any:
    items: dict[str, Any] = {}
    while inner.peek() is not None:
        taken = [t for t in inner.expression({",", "nl"}) if t.kind != "nl"]
        inner.index += 1
        if not taken:
            continue
        if taken[0].kind == "ident" and taken[0].value == "for":
            return UNKNOWN
        split = next((i for i, t in enumerate(taken) if t.kind == "punct" and t.value in ("=", ":")), None)
        if split != 1:
            return UNKNOWN  # a key that is an expression (`(var.k) = v`): which key is not known
        key = taken[0]
        if key.kind == "ident":
            name: Any = key.value
        elif key.kind == "str" and None not in key.value.parts:
            name = "".join(p or "" for p in key.value.parts)
        else:
            return UNKNOWN
        items[name] = _value(taken[2:], depth + 1)
    return items


def parse(text: str) -> list[Block]:
    """The top-level blocks of a configuration file's text (HclError: not HCL this reader follows)."""
    parser = _Parser(_tokens(text))
    _attributes, blocks = parser.body(0, closed=False)
    return blocks
