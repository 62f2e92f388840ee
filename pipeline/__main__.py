"""``python -m pipeline``: see :mod:`pipeline.cli`."""
import sys

from pipeline.cli import main

if __name__ == "__main__":
    sys.exit(main())
