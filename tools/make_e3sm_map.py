#!/usr/bin/env python3
"""Writes a PIO decomposition map (.dat, "version 2001") shaped like an E3SM
F-case atmosphere map: ncol columns x nlev levels over npes tasks. Columns are
cut into short chunks (as the cubed-sphere element order leaves them) and dealt
to the tasks in a fixed shuffled order, so each task owns several separate
column ranges on every level; a few tasks end with holes (0), as PIO pads maps.

    python3 tools/make_e3sm_map.py [--ncol 866] [--nlev 72] [--npes 16] > map.dat
"""
import argparse
import random
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ncol", type=int, default=866)
    ap.add_argument("--nlev", type=int, default=72)
    ap.add_argument("--npes", type=int, default=16)
    ap.add_argument("--seed", type=int, default=2001)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    chunks, c = [], 0
    while c < args.ncol:  # chunks of 4 to 9 columns
        n = min(args.ncol - c, rng.randint(4, 9))
        chunks.append(range(c, c + n))
        c += n
    rng.shuffle(chunks)
    owned = [[] for _ in range(args.npes)]
    for i, chunk in enumerate(chunks):
        owned[i % args.npes].extend(chunk)
    out = sys.stdout
    out.write(f"version 2001 npes {args.npes} ndims 2\n{args.ncol} {args.nlev}\n")
    for task, cols in enumerate(owned):
        # 1-based offsets into the (ncol fastest, nlev) array, sorted
        offsets = sorted(col + lev * args.ncol + 1 for lev in range(args.nlev) for col in cols)
        offsets += [0] * (task % 3)  # holes
        out.write(f"{task} {len(offsets)}\n{' '.join(map(str, offsets))}\n")


if __name__ == "__main__":
    main()
