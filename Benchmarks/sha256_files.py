#!/usr/bin/env python3
"""SHA-256 of every file under the given paths, as a BagIt writer must compute them (hashlib: OpenSSL, SHA-NI where
the CPU has it). Run beside `tar --zstd` by Scripts/bench, it gives the floor of writing a bag: archiving plus
checksumming the same bytes, before any record is parsed."""
import hashlib
import os
import sys


def files(paths):
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs.sort()
                for name in sorted(names):
                    yield os.path.join(root, name)
        else:
            yield path


def main():
    count = 0
    for path in files(sys.argv[1:]):
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
        count += 1
    print(f"{count} files hashed", file=sys.stderr)


if __name__ == "__main__":
    main()
