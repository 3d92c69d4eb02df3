"""`python -m wavelift`: the `wavelift` command."""

import sys

from wavelift.cli import main

sys.exit(main())
