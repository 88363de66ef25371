"""``python -m recmeta``: the ``recmeta`` command, as ``python -m recmeta.cli``."""

import sys

from .cli import main

sys.exit(main())
