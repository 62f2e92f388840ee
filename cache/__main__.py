"""Entry point of ``python -m cache`` (see cache.cli)."""

import sys

from .cli import main

sys.exit(main())
