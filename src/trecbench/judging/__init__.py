"""Judging: turning pool candidates into judgments by a model, and checking a model judge against people.

pool (`judge_pool`: a workspace's pool judged start to end, or its cost estimated), llm (live judging
through `trecbench.llm`), batch (the same requests through a provider's batch interface), prompts (the
relevance prompt and its reply reader), estimate (what judging will cost, before anything is judged),
validate (`judge validate`: a blind sample graded by people and models, compared), audit (`judge llm
--audit`: old qrels re-judged, the worst disagreements queued for people), holes (`judge holes`: a new run's
top-k pairs people did not grade, judged by a model through `judge_pool`, and its score three ways),
judge_checks (tau_AP, label stability and new-run bias, printed by `judge validate`). People judge in
`trecbench.web`.
"""
