"""Deprecated name of `httpcontent.xml` (the modules are named by format: json, xml, image,
plist, records, schema). Importing it warns and gives the same module object."""

from __future__ import annotations

import sys
import warnings

from . import xml as _module

warnings.warn("httpcontent.xmlcontent is deprecated: import httpcontent.xml", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
