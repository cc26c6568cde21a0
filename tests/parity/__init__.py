"""Differential tests: the same scenarios on durable_debug and on LangGraph, compared."""
