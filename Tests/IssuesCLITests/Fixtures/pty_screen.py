#!/usr/bin/env python3
"""Runs a command on a real pseudo-terminal of a given size, optionally presses Ctrl-C, and replays what
it printed on a small VT100 screen model, so a test can check what a user would be left looking at.

    pty_screen.py --cols 80 --rows 24 [--interrupt-after TEXT [--interrupt-count N]] -- command args...

Prints one JSON object: status (exit code, or 128+signal), screen (the visible rows at the end, right-trimmed),
wrapped (a character ever went past the last column), max_column (widest column written, 1-based),
escapes (any escape sequence was printed), unknown (escape sequences the model does not know), raw (all
output, decoded). Widths come from Python's unicodedata, independently of the program under test.
"""
import argparse
import errno
import json
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import fcntl
import time
import unicodedata


def char_width(ch):
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


class Screen:
    def __init__(self, cols, rows):
        self.cols, self.rows = cols, rows
        self.lines = [[]]  # every row ever, scrolled-off ones first
        self.top = 0  # first visible row
        self.r, self.c = 0, 0
        self.pending_wrap = False
        self.wrapped = False
        self.max_column = 0
        self.escapes = False
        self.unknown = set()

    def row(self):
        while len(self.lines) <= self.r:
            self.lines.append([])
        return self.lines[self.r]

    def line_feed(self):
        self.r += 1
        self.row()
        if self.r - self.top >= self.rows:
            self.top = self.r - self.rows + 1

    def put(self, ch):
        w = char_width(ch)
        if w == 0:
            return
        if self.pending_wrap or self.c + w > self.cols:
            self.wrapped = True
            self.pending_wrap = False
            self.c = 0
            self.line_feed()
        line = self.row()
        while len(line) < self.c + w:
            line.append(" ")
        line[self.c] = ch
        if w == 2:
            line[self.c + 1] = ""  # the right half of a wide character
        self.c += w
        self.max_column = max(self.max_column, self.c)
        if self.c >= self.cols:
            self.c = self.cols - 1
            self.pending_wrap = True

    def csi(self, params, final):
        n = int(params) if params.isdigit() else (0 if final in "JK" else 1)
        self.pending_wrap = False
        if final == "A":
            self.r = max(self.top, self.r - n)
        elif final == "B":
            self.r = min(self.top + self.rows - 1, self.r + n)
            self.row()
        elif final == "C":
            self.c = min(self.cols - 1, self.c + n)
        elif final == "D":
            self.c = max(0, self.c - n)
        elif final == "K" and n == 0:
            del self.row()[self.c:]
        elif final == "J" and n == 0:
            del self.row()[self.c:]
            del self.lines[self.r + 1:]
        elif final == "m":
            pass
        else:
            self.unknown.add(params + final)

    def feed(self, text):
        i = 0
        while i < len(text):
            ch = text[i]
            if ch == "\x1b":
                self.escapes = True
                m = re.match(r"\x1b\[([0-9;?]*)([A-Za-z])", text[i:])
                if m:
                    self.csi(m.group(1), m.group(2))
                    i += m.end()
                    continue
                self.unknown.add(repr(text[i : i + 2]))
                i += 2
                continue
            if ch == "\r":
                self.c, self.pending_wrap = 0, False
            elif ch == "\n":
                self.pending_wrap = False
                self.line_feed()
            elif ch == "\b":
                self.c = max(0, self.c - 1)
            elif ch in "\x07\x0f\x0e":
                pass
            elif ord(ch) < 0x20:
                self.unknown.add(repr(ch))
            else:
                self.put(ch)
            i += 1

    def visible(self):
        rows = ["".join(line).rstrip() for line in self.lines[self.top : self.top + self.rows]]
        while rows and not rows[-1]:
            rows.pop()
        return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cols", type=int, default=80)
    parser.add_argument("--rows", type=int, default=24)
    parser.add_argument("--interrupt-after", help="press Ctrl-C once the output contains this text")
    parser.add_argument("--interrupt-count", type=int, default=1, help="... this many times")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command

    pid, fd = pty.fork()
    if pid == 0:
        # The child end: size the terminal before the program can ask for it.
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", args.rows, args.cols, 0, 0))
        os.execvp(command[0], command)

    output = bytearray()
    interrupted = args.interrupt_after is None
    deadline = time.monotonic() + args.timeout
    while True:
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError as error:  # EIO: the child and all its descendants closed the terminal
                if error.errno != errno.EIO:
                    raise
                chunk = b""
            if not chunk:
                break
            output += chunk
        if not interrupted and output.count(args.interrupt_after.encode()) >= args.interrupt_count:
            os.write(fd, b"\x03")  # Ctrl-C through the line discipline, as a user presses it
            interrupted = True
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    code = 128 - code if code < 0 else code

    text = output.decode("utf-8", errors="replace")
    screen = Screen(args.cols, args.rows)
    screen.feed(text)
    json.dump(
        {
            "status": code,
            "screen": screen.visible(),
            "wrapped": screen.wrapped,
            "max_column": screen.max_column,
            "escapes": screen.escapes,
            "unknown": sorted(screen.unknown),
            "raw": text,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
