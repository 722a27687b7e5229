#!/usr/bin/env python3
"""Write the weights (.bin) files of the hand-written sample IRs in samples/.

Deterministic and standard-library only: run it from anywhere and commit the result.

    python3 scripts/make_sample_bins.py            # writes samples/*.bin
    python3 scripts/make_sample_bins.py --check    # exit 1 if a committed .bin is stale

An IR .bin is the raw little-endian bytes of every Const, densely packed; each Const's
<data offset=".." size=".."/> in the .xml points into it.
"""

import argparse
import struct
import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def adaptive_v11() -> bytes:
    # Const 'output_size': element_type="i64" shape="2" offset="0" size="16".
    return struct.pack("<2q", 3, 4)


def multi_op_v11() -> bytes:
    # Const 'conv.weight': f32 shape 8,3,3,3, offset 0, size 864.
    # Small multiples of 1/8 (exact in f32), a different pattern per output channel.
    weights = []
    for o in range(8):
        for i in range(3):
            for y in range(3):
                for x in range(3):
                    weights.append(((o * 5 + i * 3 + y * 2 + x) % 7 - 3) / 8.0)
    data = struct.pack("<%df" % len(weights), *weights)
    assert len(data) == 864
    # Const 'conv.bias': f32 shape 1,8,1,1, offset 864, size 32.
    bias = [(o - 4) / 4.0 for o in range(8)]
    data += struct.pack("<8f", *bias)
    assert len(data) == 896
    return data


BINS = {
    "adaptive_v11.bin": adaptive_v11,
    "adaptive_max_v11.bin": adaptive_v11,  # the same output_size Const
    "multi_op_v11.bin": multi_op_v11,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if a .bin differs from what would be written")
    args = parser.parse_args()
    stale = []
    for name, make in BINS.items():
        path = SAMPLES / name
        data = make()
        if args.check:
            if not path.exists() or path.read_bytes() != data:
                stale.append(name)
            continue
        path.write_bytes(data)
        print(f"wrote {path} ({len(data)} bytes)")
    if stale:
        print("stale: " + ", ".join(stale) + " (run scripts/make_sample_bins.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
