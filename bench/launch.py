"""Runs one command and reports its wall time and peak resident set: `python3 -S launch.py FD CMD...`.

Why a separate, small process: on Linux a child's ru_maxrss starts from its parent's resident set (fork
copies the memory map's high-water mark and exec keeps it in the process's maxrss), so a command spawned
straight from the benchmark's Python process, which holds generated data, would be charged that
process's memory (measured: /bin/true spawned from a 200 MiB Python process reported 214 MiB). This
launcher is a few MiB, and what it reports is max(its own few MiB, the command's peak).

The launcher's stdin, stdout, stderr and working directory are the command's. It times from just
before the fork to just after the reap and writes "SECONDS EXIT_STATUS MAXRSS_KIB" to file descriptor FD
(closed in the command). Imports only os, sys and time, to stay small.
"""

import os
import sys
import time


def main():
    report, cmd = int(sys.argv[1]), sys.argv[2:]
    os.set_inheritable(report, False)
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        except OSError as e:
            os.write(2, f"launch: cannot run {cmd[0]}: {e}\n".encode())
        os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - start
    os.write(report, f"{seconds!r} {os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}\n".encode())


if __name__ == "__main__":
    main()
