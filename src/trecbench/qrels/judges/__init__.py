"""Judges that turn pool candidates into judgments: a model through litellm (`llm`), or people (the web app)."""
