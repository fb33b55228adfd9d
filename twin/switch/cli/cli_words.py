"""A command line split as bash splits it (quotes, backslashes), its unquoted operators kept apart.

The switch's shell runs no shell: a line becomes words for one of its commands, and `|` stages for
its filters. Every other unquoted operator (`;`, `&`, `&&`, `||`, `<`, `>`, `>>`, `(`, `)`, a
backquote or `$(`) is reported so the shell can refuse the line instead of mis-reading it.
"""

from __future__ import annotations

from dataclasses import dataclass

OPERATOR_CHARS = "|&;<>()`"


@dataclass(frozen=True)
class Op:
    """An unquoted operator: `|`, `||`, `&&`, `;`, `>`, `$(`, ..."""

    text: str


Token = str | Op


class SyntaxErr(ValueError):
    """bash's own complaint (an unterminated quote)."""


def tokenize(line: str) -> list[Token]:
    """Words and operators of `line`: quotes removed, backslash escapes applied, `$(` an operator."""
    tokens: list[Token] = []
    word: list[str] = []
    in_word = quoted_substitution = False
    i = 0
    while i < len(line):
        c = line[i]
        if c in " \t\n":
            if in_word:
                tokens.append("".join(word))
                word, in_word = [], False
            i += 1
        elif c == "\\":
            if i + 1 < len(line):
                word.append(line[i + 1])
            in_word = True
            i += 2
        elif c == "'":
            end = line.find("'", i + 1)
            if end < 0:
                raise SyntaxErr("unexpected EOF while looking for matching `''")
            word.append(line[i + 1:end])
            in_word = True
            i = end + 1
        elif c == '"':
            i += 1
            while True:
                if i >= len(line):
                    raise SyntaxErr("unexpected EOF while looking for matching `\"'")
                ch = line[i]
                if ch == '"':
                    break
                if ch == "\\" and i + 1 < len(line) and line[i + 1] in '"\\$`':
                    word.append(line[i + 1])
                    i += 2
                    continue
                if ch == "`" or (ch == "$" and line[i + 1:i + 2] == "("):
                    quoted_substitution = True
                word.append(ch)
                i += 1
            in_word = True
            i += 1
        elif c == "$" and line[i + 1:i + 2] == "(":
            if in_word:
                tokens.append("".join(word))
                word, in_word = [], False
            tokens.append(Op("$("))
            i += 2
        elif c in OPERATOR_CHARS:
            if in_word:
                tokens.append("".join(word))
                word, in_word = [], False
            two = line[i:i + 2]
            op = two if two in ("||", "&&", ">>", "<<", ">&", "&>", ";;") else c
            tokens.append(Op(op))
            i += len(op)
        else:
            word.append(c)
            in_word = True
            i += 1
    if in_word:
        tokens.append("".join(word))
    if quoted_substitution:  # bash would run it even inside double quotes
        tokens.append(Op("$("))
    return tokens


def pipeline(tokens: list[Token]) -> list[list[str]] | Op:
    """The `|` stages of `tokens` as word lists; the first other operator when there is one."""
    stages: list[list[str]] = [[]]
    for token in tokens:
        if isinstance(token, Op):
            if token.text != "|":
                return token
            stages.append([])
        else:
            stages[-1].append(token)
    return stages
