"""LangGraph's ``langgraph.pregel`` package, at the same path under ``durable_debug`` (only
the modules listed here)."""
