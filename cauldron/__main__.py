"""``python -m cauldron <command> ...``: the ``cauldron`` command (:mod:`cauldron.cli`)."""

from cauldron.cli import main

raise SystemExit(main())
