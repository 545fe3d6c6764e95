"""Deprecated name of `httpcontent.json` (the modules are named by format: json, xml, image,
plist, records, schema). Importing it warns and gives the same module object."""

from __future__ import annotations

import sys
import warnings

from . import json as _module

warnings.warn("httpcontent.jsoncontent is deprecated: import httpcontent.json", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _module
