"""`python -m trecbench` runs the `trecbench` command."""
from trecbench.cli import main

main()
