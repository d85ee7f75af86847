"""The assessor web app (`trecbench serve`): judging in the browser; see `trecbench.web.app`."""
