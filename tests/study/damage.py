"""Damages a copy of a study file in one seeded way: `damage.py IN OUT KIND SEED`.

Kinds: truncate (cut anywhere), zero_header (the first 512 bytes), every_kb (64 random bytes every
~1 KB after the first 2 KB), flips (1-40 bit flips anywhere), meta_block / data_block (256 random
bytes over the file's metadata / inside the /trials dataset's raw data chunks).
"""
import random
import sys

import h5py

src, dst, kind, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
data = bytearray(open(src, "rb").read())
rng = random.Random(f"{kind}-{seed}")


def chunk_ranges():
    """(offset, size) of /trials' stored chunks."""
    with h5py.File(src, "r", swmr=True) as f:
        ds = f["trials"]
        ranges = []
        for i in range(ds.id.get_num_chunks()):
            info = ds.id.get_chunk_info(i)
            ranges.append((info.byte_offset, info.size))
        return ranges


if kind == "truncate":
    data = data[: rng.randrange(64, len(data))]
elif kind == "zero_header":
    data[:512] = bytes(512)
elif kind == "every_kb":
    for offset in range(2048, len(data), 1024):
        for i in range(64):
            if offset + i < len(data):
                data[offset + i] = rng.randrange(256)
elif kind == "flips":
    for _ in range(rng.randrange(1, 41)):
        i = rng.randrange(len(data))
        data[i] ^= 1 << rng.randrange(8)
elif kind in ("meta_block", "data_block"):
    chunks = chunk_ranges()
    if kind == "data_block":
        offset, size = rng.choice(chunks)
        start = offset + rng.randrange(max(1, size - 256))
    else:
        in_chunk = lambda i: any(o <= i < o + s for o, s in chunks)
        start = rng.choice([i for i in range(0, len(data) - 256, 16) if not in_chunk(i)])
    data[start : start + 256] = bytes(rng.randrange(256) for _ in range(256))
else:
    sys.exit(f"unknown kind {kind}")
open(dst, "wb").write(bytes(data))
