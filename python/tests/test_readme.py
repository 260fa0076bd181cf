"""The README's Python example runs as it is, from the checkout and from a
venv where `pip install ./python` put the package (offline: no index)."""
import os
import re
import shutil
import subprocess
import sys

from conftest import ROOT


def readme_example():
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def check_output(stdout):
    lines = stdout.splitlines()
    assert lines[0].startswith("[TensorInfo(name='input.1'")
    assert "ok=True" in lines[1]
    assert "op results all agree" in lines[2]
    assert lines[3] == "input 'input.1' is f32[2,2,8,8], the Program expects f32[-1,3,8,8]"


def test_readme_example_runs_from_the_checkout():
    r = subprocess.run([sys.executable, "-c", readme_example()], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    check_output(r.stdout)


def test_pip_install_in_a_venv(tmp_path):
    """python3 -m venv --system-site-packages, `python -m pip install DIR`
    with no index to reach (setuptools is Debian's: no pyproject.toml, so
    no isolated build environment to fetch), then the example with only the
    installed package: no PYTHONPATH, no DY2STC_LIB."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    src = tmp_path / "python"  # a copy: an in-tree build writes build/ and egg-info
    shutil.copytree(ROOT / "python", src, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__", "tests"))
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    py = str(venv / "bin" / "python")
    r = subprocess.run([py, "-m", "pip", "install", str(src)], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    env.pop("DY2STC_LIB", None)
    r = subprocess.run([py, "-c", "import dy2stc, os; print(dy2stc.__file__)"], env=env,
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0 and str(venv) in r.stdout, r.stdout + r.stderr
    assert (venv / r.stdout.strip()).parent.joinpath("libdy2stc.so").exists()
    r = subprocess.run([py, "-c", readme_example()], cwd=ROOT, env=env, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    check_output(r.stdout)
