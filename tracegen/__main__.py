"""``python -m tracegen``: the same as the ``tracegen`` command."""

import sys

from tracegen.cli import main

sys.exit(main())
