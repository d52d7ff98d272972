"""Textual widgets, each showing one part of the fleet model."""
