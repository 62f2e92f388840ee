"""``python -m pipeline``: see :mod:`pipeline.run.cli`."""
import sys

from pipeline.run.cli import main

if __name__ == "__main__":
    sys.exit(main())
