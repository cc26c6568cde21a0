"""Helpers shared by test folders: the notebooks' example graphs as source text
(``support.seed_graphs``) and a LangGraph app as users write it (``support.langgraph_app``).

pyproject.toml puts ``tests/`` on pytest's ``pythonpath``, so every test imports them as
``from support.seed_graphs import load``.
"""
