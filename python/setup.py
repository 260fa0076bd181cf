"""setup.py - the dy2stc Python package (pure Python over libdy2stc.so).

    python3 -m pip install ./python

needs no network and compiles nothing: it copies the package and, when the
project has been built, the library it calls (build/compiler/libdy2stc.so,
or the file $DY2STC_LIB names) into the installed package. Without one, the
package looks for the library at run time ($DY2STC_LIB, then the build tree
of the checkout it sits in) and says so when it cannot find it.
setuptools is Debian's (python3-setuptools): there is no pyproject.toml, so
pip builds with the setuptools already installed instead of fetching one.
"""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def built_library():
    env = os.environ.get("DY2STC_LIB")
    if env:
        return env if os.path.exists(env) else None
    path = os.path.join(HERE, "..", "build", "compiler", "libdy2stc.so")
    return path if os.path.exists(path) else None


class BuildWithLibrary(build_py):
    """build_py, then libdy2stc.so copied beside the package's modules."""

    def run(self):
        super().run()
        lib = built_library()
        if lib:
            dest = os.path.join(self.build_lib, "dy2stc", "libdy2stc.so")
            self.mkpath(os.path.dirname(dest))
            shutil.copyfile(lib, dest + ".tmp")
            os.replace(dest + ".tmp", dest)
        else:
            print("dy2stc: libdy2stc.so not built yet; the package will look for "
                  "it at run time ($DY2STC_LIB)")


setup(
    name="dy2stc",
    version="0.1.0",
    description="dy2stc, an ahead-of-time neural-network compiler to C, from Python",
    packages=["dy2stc"],
    python_requires=">=3.9",
    install_requires=["numpy"],
    cmdclass={"build_py": BuildWithLibrary},
    zip_safe=False,
)
