#!/usr/bin/env python3
"""Independent check of a PLY file senc wrote: a pure-stdlib reader.

Parses the header, then unpacks the binary little-endian (or ASCII) payload
with `struct`, and prints `key value...` lines: format, vertex and face
counts, the number of triangles and the bounding box of x/y/z (floats in
Python's shortest round-trip repr, so a reader can compare them exactly).
Exit status 1 with a message on anything it cannot read.

Usage: python3 scripts/check_ply.py FILE.ply
"""
import struct
import sys

SCALAR = {
    "char": "b", "int8": "b", "uchar": "B", "uint8": "B",
    "short": "h", "int16": "h", "ushort": "H", "uint16": "H",
    "int": "i", "int32": "i", "uint": "I", "uint32": "I",
    "float": "f", "float32": "f", "double": "d", "float64": "d",
}


def read_header(data):
    end = data.find(b"end_header\n")
    if not data.startswith(b"ply\n") or end < 0:
        raise ValueError("not a PLY file (no 'ply' magic or no end_header)")
    lines = data[:end].decode("ascii").splitlines()[1:]
    fmt, elements = None, []
    for line in lines:
        words = line.split()
        if not words or words[0] in ("comment", "obj_info"):
            continue
        if words[0] == "format":
            fmt = words[1]
        elif words[0] == "element":
            elements.append({"name": words[1], "count": int(words[2]), "props": []})
        elif words[0] == "property":
            if words[1] == "list":
                prop = (words[4], SCALAR[words[2]], SCALAR[words[3]])
            else:
                prop = (words[2], None, SCALAR[words[1]])
            elements[-1]["props"].append(prop)
        else:
            raise ValueError("unknown header line: " + line)
    return fmt, elements, end + len(b"end_header\n")


def read_binary(data, offset, elements):
    """Yields (element name, {property: value}) for every element."""
    for element in elements:
        for _ in range(element["count"]):
            row = {}
            for name, count_type, value_type in element["props"]:
                if count_type is None:
                    (row[name],) = struct.unpack_from("<" + value_type, data, offset)
                    offset += struct.calcsize(value_type)
                else:
                    (n,) = struct.unpack_from("<" + count_type, data, offset)
                    offset += struct.calcsize(count_type)
                    row[name] = struct.unpack_from("<%d%s" % (n, value_type), data, offset)
                    offset += n * struct.calcsize(value_type)
            yield element["name"], row
    if offset != len(data):
        raise ValueError("%d bytes after the last element" % (len(data) - offset))


def read_ascii(data, offset, elements):
    lines = iter(data[offset:].decode("ascii").split("\n"))
    for element in elements:
        for _ in range(element["count"]):
            words = next(lines).split()
            row = {}
            for name, count_type, value_type in element["props"]:
                cast = float if value_type in "fd" else int
                if count_type is None:
                    row[name] = cast(words.pop(0))
                else:
                    n = int(words.pop(0))
                    row[name] = tuple(cast(w) for w in words[:n])
                    del words[:n]
            yield element["name"], row


def summarize(path):
    with open(path, "rb") as f:
        data = f.read()
    fmt, elements, offset = read_header(data)
    if fmt == "binary_little_endian":
        rows = read_binary(data, offset, elements)
    elif fmt == "ascii":
        rows = read_ascii(data, offset, elements)
    else:
        raise ValueError("unsupported format " + str(fmt))
    lo, hi = [float("inf")] * 3, [float("-inf")] * 3
    counts = {"vertex": 0, "face": 0}
    triangles = 0
    for name, row in rows:
        counts[name] = counts.get(name, 0) + 1
        if name == "vertex":
            for axis, key in enumerate("xyz"):
                lo[axis] = min(lo[axis], row[key])
                hi[axis] = max(hi[axis], row[key])
        elif name == "face":
            triangles += len(row["vertex_indices"]) - 2
    return {
        "format": fmt,
        "vertices": counts["vertex"],
        "faces": counts["face"],
        "triangles": triangles,
        "bbox_min": lo,
        "bbox_max": hi,
    }


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        for key, value in summarize(sys.argv[1]).items():
            words = value if isinstance(value, list) else [value]
            print(key, *(repr(w) if isinstance(w, float) else w for w in words))
    except (ValueError, KeyError, struct.error, StopIteration, OSError) as e:
        sys.exit("check_ply: %s: %s" % (sys.argv[1], e))
