"""Import litellm once, offline and quiet: no cost-map fetch, no tokenizer download, no banners."""
from __future__ import annotations

import logging
import os
import warnings
from types import ModuleType

_litellm: ModuleType | None = None


def offline_environment() -> None:
    """Default the variables that keep litellm off the network; set before its import, which reads them
    (without LITELLM_LOCAL_MODEL_COST_MAP the cost map is fetched from GitHub while litellm is imported)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")


def load() -> ModuleType:
    """Return the litellm module, importing it (slow, ~3 s) on first use with network look-ups turned off.

    The variables are only defaulted: a user who exports LITELLM_LOCAL_MODEL_COST_MAP=False or
    LITELLM_OFFLINE_MODE=false before running trecbench gets litellm's online behaviour back.
    """
    global _litellm
    if _litellm is not None:
        return _litellm
    offline_environment()
    # litellm's TypedDicts make pydantic warn about `ReadOnly` items the first time each is used.
    warnings.filterwarnings("ignore", message=r".*`ReadOnly` qualifier", category=UserWarning,
                            module=r"pydantic\.")
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banner printed on every exception
    litellm.telemetry = False  # honoured by older releases; harmless where the attribute no longer exists
    litellm.disable_hf_tokenizer_download = True
    if not os.environ.get("LITELLM_LOG"):
        # trecbench reports failures itself; litellm would log each one again, with a stack of context.
        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
            logging.getLogger(name).setLevel(logging.ERROR)
    _litellm = litellm
    return litellm
