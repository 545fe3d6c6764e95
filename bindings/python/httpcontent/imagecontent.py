"""Deprecated name of `httpcontent.image` (the modules are named by format: json, xml, image,
plist, records, schema). Importing it warns and gives the same module object."""

from __future__ import annotations

import sys
import warnings

from . import image as _module

warnings.warn("httpcontent.imagecontent is deprecated: import httpcontent.image", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
