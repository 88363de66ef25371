"""``python -m recmeta.cli``: the ``recmeta`` command."""

import sys

from . import main

sys.exit(main())
