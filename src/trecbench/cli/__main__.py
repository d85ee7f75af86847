"""`python -m trecbench.cli` runs the `trecbench` command."""
from trecbench.cli import main

main()
