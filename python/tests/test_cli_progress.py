"""The progress line of long work (compiler/cli/cli_progress.c): on a
terminal (stderr a pty) compile, quantize, train and bench keep one line
up to date with \\r and clear it at the end; with --quiet, or when stderr
is not a terminal, they print nothing on stderr. --report adds the time of
each phase."""
import os
import pty
import subprocess

import numpy as np
import pytest

from conftest import CLI, CNN, EXE_ENV


def run_tty(args, cwd):
    """Run with stderr on a pseudo-terminal: (stdout, what the terminal got)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([str(CLI), *map(str, args)], stdout=subprocess.PIPE, stderr=slave,
                         stdin=subprocess.DEVNULL, cwd=cwd, env=EXE_ENV)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    out = p.stdout.read().decode()
    assert p.wait() == 0, b"".join(chunks).decode(errors="replace")
    os.close(master)
    return out, b"".join(chunks).decode(errors="replace")


def run_pipe(args, cwd):
    r = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, cwd=cwd,
                       env=EXE_ENV)
    assert r.returncode == 0, r.stderr
    return r.stdout, r.stderr


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """Calibration files, training data and labels for the CNN."""
    d = tmp_path_factory.mktemp("progress")
    rng = np.random.default_rng(0)
    (d / "calib").mkdir()
    for i in range(3):
        np.save(d / "calib" / f"c{i}.npy", rng.random((2, 3, 8, 8), dtype=np.float32))
    np.save(d / "x.npy", rng.random((64, 3, 8, 8), dtype=np.float32))
    np.save(d / "y.npy", rng.integers(0, 10, 64).astype(np.int64))
    return d


COMMANDS = {
    "compile": (["compile", CNN, "-o", "exe"], ["import", "pass:fuse-conv", "cc"]),
    "quantize": (["quantize", CNN, "--calibrate", "calib", "-o", "q"],
                 ["read", "calibrate", "measure"]),
    "train": (["train", CNN, "--input", "input.1=x.npy", "--labels", "y.npy", "--loss",
               "cross_entropy", "--optimizer", "sgd", "--batch", "8", "-o", "t"],
              ["epoch 1/1 "]),
    "bench": (["bench", CNN, "--runs", "3"], ["import", "cc", "run"]),
}


@pytest.mark.parametrize("cmd", list(COMMANDS))
def test_progress_line_on_a_terminal(cmd, work):
    args, phases = COMMANDS[cmd]
    out, tty = run_tty(args, work)
    assert f"\rdy2stc {cmd}: " in tty
    for ph in phases:
        assert f"dy2stc {cmd}: {ph}" in tty, (ph, tty)
    assert tty.endswith("\r\x1b[K"), repr(tty[-40:])  # the line is cleared
    assert "\r" not in out


@pytest.mark.parametrize("cmd", list(COMMANDS))
def test_quiet_and_no_terminal_print_nothing(cmd, work):
    args, _ = COMMANDS[cmd]
    _, tty = run_tty(args + ["--quiet"], work)
    assert tty == ""
    _, err = run_pipe(args, work)
    assert err == ""


def test_report_has_the_time_of_each_phase(work):
    out, _ = run_pipe(["compile", CNN, "-o", "exe", "--report"], work)
    line = [x for x in out.splitlines() if x.startswith("time:")]
    assert line and all(f" {p} " in line[0] for p in ("import", "pass", "plan", "codegen",
                                                      "cc", "total")), out
    out, _ = run_pipe(["quantize", CNN, "--calibrate", "calib", "-o", "q", "--report"], work)
    assert any(x.startswith("time: import") and " calibrate " in x for x in out.splitlines())
    out, _ = run_pipe(["bench", CNN, "--runs", "3", "--report"], work)
    assert any(x.startswith("time: import") and " run " in x for x in out.splitlines())
