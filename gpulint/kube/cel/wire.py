"""The protobuf wire format, as far as reading and rewriting a ``cel.expr`` AST needs it.

cel-expr-python hands over checked and parsed expressions only as serialized protobuf; this is the
one decoder (and encoder) both the cost estimate and the format-library rewrite read them with.
"""

from __future__ import annotations


def varint(data: bytes, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result, i


Field = tuple[int, int, "int | bytes"]  # number, wire type, value


def decode(data: bytes) -> list[Field]:
    out: list[Field] = []
    i = 0
    while i < len(data):
        key, i = varint(data, i)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, i = varint(data, i)
        elif wire == 2:
            length, i = varint(data, i)
            value, i = data[i : i + length], i + length
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            value, i = data[i : i + width], i + width
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        out.append((number, wire, value))
    return out


def put_varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        bits = value & 0x7F
        value >>= 7
        if value:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


def encode(fields: list[Field]) -> bytes:
    out = bytearray()
    for number, wire, value in fields:
        out += put_varint(number << 3 | wire)
        if wire == 0:
            assert isinstance(value, int)
            out += put_varint(value)
        else:
            assert isinstance(value, bytes)
            out += put_varint(len(value)) + value if wire == 2 else value
    return bytes(out)


def source_positions(fields: list[Field], number: int) -> dict[int, int]:
    """Each node's source offset from the cel.expr.SourceInfo in field `number` of a ParsedExpr (3) or a
    CheckedExpr (5): its `positions` map (field 4), node id to offset."""
    info = next((v for n, _, v in fields if n == number and isinstance(v, bytes)), b"")
    out: dict[int, int] = {}
    for entry_number, _, entry in decode(info):
        if entry_number == 4 and isinstance(entry, bytes):
            pair = {n: v for n, _, v in decode(entry)}
            key, value = pair.get(1, 0), pair.get(2, 0)
            if isinstance(key, int) and isinstance(value, int):
                out[key] = value
    return out


def call_parts(body: bytes) -> tuple[bytes | None, str, list[bytes]]:
    """A cel.expr.Expr.Call's target (field 1, absent for a global function), function name (2) and args (3)."""
    target, function, args = None, "", []
    for number, _, value in decode(body):
        if isinstance(value, bytes):
            if number == 1:
                target = value
            elif number == 2:
                function = value.decode("utf-8", "replace")
            elif number == 3:
                args.append(value)
    return target, function, args
