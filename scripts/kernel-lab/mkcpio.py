#!/usr/bin/env python3
"""Write a newc (SVR4, no CRC) cpio archive of a directory tree, for the kernel lab's initramfs.

The host has no cpio binary and the lab must not install packages, so the format is written here; it is small:
a 110-byte ASCII header per entry, the name, the data, each padded to 4 bytes, then a TRAILER!!! entry.
Usage: mkcpio.py ROOT OUT
"""
import os
import stat
import sys


def pad4(n):
    return (4 - n % 4) % 4


def header(ino, mode, nlink, size, name, rdev=0):
    fields = [ino, mode, 0, 0, nlink, 0, size, 0, 0, os.major(rdev), os.minor(rdev), len(name) + 1, 0]
    return b"070701" + b"".join(b"%08X" % f for f in fields)


def main():
    root, out = sys.argv[1], sys.argv[2]
    ino = 1
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in [""] + sorted(dirnames) + sorted(filenames):
                path = os.path.join(dirpath, name) if name else dirpath
                rel = os.path.relpath(path, root)
                if rel == ".":
                    continue
                if name in dirnames and not os.path.islink(path):
                    # real directories are written when os.walk visits them (the "" entry); symlinks to
                    # directories are listed in dirnames but never visited, so they are written here
                    continue
                st = os.lstat(path)
                data = b""
                if stat.S_ISLNK(st.st_mode):
                    data = os.readlink(path).encode()
                elif stat.S_ISREG(st.st_mode):
                    with open(path, "rb") as g:
                        data = g.read()
                nm = rel.encode()
                h = header(ino, st.st_mode, 2 if stat.S_ISDIR(st.st_mode) else 1, len(data), nm, st.st_rdev)
                f.write(h + nm + b"\0" + b"\0" * pad4(len(h) + len(nm) + 1))
                f.write(data + b"\0" * pad4(len(data)))
                ino += 1
        nm = b"TRAILER!!!"
        h = header(0, 0, 1, 0, nm)
        f.write(h + nm + b"\0" + b"\0" * pad4(len(h) + len(nm) + 1))
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
