"""``python -m glovev_ext`` runs the ``glovev`` command."""

import sys

from .cli import main

sys.exit(main())
