"""The one build step pyproject.toml cannot declare: nnkiln's native kernels, a C library compiled at install time.

The rules (flags, what happens without a compiler, failures) are in nnkiln/runtime/native/build.py, loaded here by
path because nnkiln's dependencies are not installed yet while it builds.
"""

import importlib.util
from pathlib import Path

from setuptools import setup

_spec = importlib.util.spec_from_file_location("nnkiln_native_build", Path(__file__).parent / "nnkiln/runtime/native/build.py")
native = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(native)

setup(ext_modules=[native.extension()], cmdclass={"build_ext": native.command()})
