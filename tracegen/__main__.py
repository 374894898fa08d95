"""``python -m tracegen``: the same as the ``tracegen`` command."""

import sys

from tracegen.entry import main

sys.exit(main())
