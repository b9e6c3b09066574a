"""The frozen app's entry point: the same ``lantide`` command line as the wheel's script."""

import sys

from lantide.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
